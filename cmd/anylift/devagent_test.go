package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDevAndAgentRefuseBadFlags: mistakes are refused before anything
// starts, with messages that name the flag.
func TestDevAndAgentRefuseBadFlags(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dev", "--count", "0", "--launch", "x"}, "--count must be 1 to 50"},
		{[]string{"dev", "--", "-port", "7777"}, "arguments after -- are for --launch"},
		{[]string{"dev", "stray"}, `unexpected argument "stray"`},
		{[]string{"dev", "--launch", "/nonexistent/gameserver"}, "--launch /nonexistent/gameserver: not an executable file"},
		{[]string{"agent", "--location", "custom-x", "--ip-address", "10.0.0.1"}, "the fleet id is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--ip-address", "10.0.0.1"}, "the location is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--location", "custom-x"}, "IP address is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--location", "custom-x", "--ip-address", "10.0.0.1"}, "credentials are required"},
	} {
		err := run(context.Background(), tc.args, none, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestDevAndAgentHelp(t *testing.T) {
	for _, cmd := range []string{"dev", "agent"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{cmd, "-h"}, func(string) string { return "" }, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "usage: anylift "+cmd) {
			t.Errorf("%s -h:\n%s", cmd, out.String())
		}
	}
}
