package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagHelpGroups: serve, dev and agent -h list every flag once, each
// in a named group (none left to "Other"), groups in their order.
func TestFlagHelpGroups(t *testing.T) {
	serveSet := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(serveSet)
	for _, tc := range []struct {
		cmd    string
		groups []flagGroup
		flags  *flag.FlagSet
	}{{"serve", serveGroups, serveSet}, {"dev", devGroups, serveSet}, {"agent", agentGroups, nil}} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{tc.cmd, "-h"}, func(string) string { return "" }, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		help := out.String()
		if !strings.HasPrefix(help, "usage: anylift "+tc.cmd) {
			t.Errorf("%s -h does not start with its usage:\n%s", tc.cmd, help)
		}
		if strings.Contains(help, "\nOther:\n") {
			t.Errorf("%s -h has flags in no group (add them to %sGroups):\n%s", tc.cmd, tc.cmd, help[strings.Index(help, "\nOther:\n"):])
		}
		at := 0
		for _, g := range tc.groups {
			i := strings.Index(help, "\n"+g.title+":\n")
			if i < at {
				t.Errorf("%s -h: group %q missing or out of order", tc.cmd, g.title)
				continue
			}
			at = i
		}
		if tc.flags != nil {
			tc.flags.VisitAll(func(f *flag.Flag) {
				if n := strings.Count(help, "\n  --"+f.Name+" "); n != 1 {
					t.Errorf("%s -h lists --%s %d times", tc.cmd, f.Name, n)
				}
			})
		}
		for i, line := range strings.Split(help, "\n") {
			if len(line) > helpWidth && !strings.HasPrefix(line, "  --") {
				t.Errorf("%s -h line %d is %d columns wide: %q", tc.cmd, i+1, len(line), line)
			}
		}
	}
}

// TestAgentEndpointURL: the agent's endpoint flag is --endpoint-url, as in
// the CLI, from the command line, ANYLIFT_ENDPOINT_URL, ANYLIFT_ENDPOINT
// (the CLI's variable) or the config file; --endpoint still works and
// warns.
func TestAgentEndpointURL(t *testing.T) {
	base := []string{"--fleet-id", "fleet-1", "--location", "custom-x", "--ip-address", "10.0.0.1"}
	conf := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(conf, []byte(`{"endpoint": "http://from-file:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		want   string
		warned bool
	}{
		{"default", nil, nil, "http://127.0.0.1:9870", false},
		{"--endpoint-url", []string{"--endpoint-url", "http://a:1"}, nil, "http://a:1", false},
		{"--endpoint-url=", []string{"--endpoint-url=http://a:1"}, nil, "http://a:1", false},
		{"--endpoint (deprecated)", []string{"--endpoint", "http://b:1"}, nil, "http://b:1", true},
		{"-endpoint= (deprecated)", []string{"-endpoint=http://b:1"}, nil, "http://b:1", true},
		{"ANYLIFT_ENDPOINT_URL", nil, map[string]string{"ANYLIFT_ENDPOINT_URL": "http://c:1"}, "http://c:1", false},
		{"ANYLIFT_ENDPOINT", nil, map[string]string{"ANYLIFT_ENDPOINT": "http://d:1"}, "http://d:1", false},
		{"ANYLIFT_ENDPOINT_URL over ANYLIFT_ENDPOINT", nil,
			map[string]string{"ANYLIFT_ENDPOINT": "http://d:1", "ANYLIFT_ENDPOINT_URL": "http://c:1"}, "http://c:1", false},
		{"the command line over the environment", []string{"--endpoint", "http://b:1"},
			map[string]string{"ANYLIFT_ENDPOINT_URL": "http://c:1"}, "http://b:1", true},
		{"config file key endpoint", []string{"--config", conf}, nil, "http://from-file:1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, help, err := agentConfig(append(append([]string{}, base...), tc.args...), func(k string) string { return tc.env[k] }, &bytes.Buffer{}, &stderr)
			if err != nil || help {
				t.Fatalf("help %v, err %v", help, err)
			}
			if cfg.Endpoint != tc.want {
				t.Errorf("endpoint %q, want %q", cfg.Endpoint, tc.want)
			}
			if warned := strings.Contains(stderr.String(), "--endpoint is deprecated"); warned != tc.warned {
				t.Errorf("warned %v, want %v: %s", warned, tc.warned, stderr.String())
			}
		})
	}
}
