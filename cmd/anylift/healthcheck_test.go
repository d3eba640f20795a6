package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/apitest"
)

// "anylift healthcheck" against a real server: ready at the address given
// by flag, by ANYLIFT_LISTEN (on every interface, asked on the loopback
// one) or by the config file's "listen"; /healthz with --path.
func TestHealthcheckReadyServer(t *testing.T) {
	env := apitest.Start(t)
	hostPort := strings.TrimPrefix(env.URL, "http://")
	_, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "anylift.json")
	if err := os.WriteFile(conf, []byte(`{"listen": "0.0.0.0:`+port+`", "data-dir": "/data", "log-level": "debug"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"flag", []string{"--listen", hostPort}, nil, "/readyz: ready"},
		{"environment", nil, map[string]string{"ANYLIFT_LISTEN": "0.0.0.0:" + port}, "/readyz: ready"},
		{"environment without host", nil, map[string]string{"ANYLIFT_LISTEN": ":" + port}, "/readyz: ready"},
		{"config file", nil, map[string]string{"ANYLIFT_CONFIG": conf}, "/readyz: ready"},
		{"flag over environment", []string{"--listen", hostPort}, map[string]string{"ANYLIFT_LISTEN": "127.0.0.1:1"}, "/readyz: ready"},
		{"healthz", []string{"--listen", hostPort, "--path", "/healthz"}, nil, "/healthz: ok"},
	} {
		var out bytes.Buffer
		getenv := func(k string) string { return tc.env[k] }
		err := run(context.Background(), append([]string{"healthcheck"}, tc.args...), getenv, &out, &out)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if want := "http://127.0.0.1:" + port + tc.want; strings.TrimSpace(out.String()) != want {
			t.Errorf("%s: printed %q, want %q", tc.name, out.String(), want)
		}
	}
}

// A server that answers 503, and an address nobody listens at, fail the
// check with what went wrong.
func TestHealthcheckFails(t *testing.T) {
	unready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not ready: draining", http.StatusServiceUnavailable)
	}))
	defer unready.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	noenv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", strings.TrimPrefix(unready.URL, "http://")}, "answered 503 Service Unavailable: not ready: draining"},
		{[]string{"--listen", closed}, "connection refused"},
		{[]string{"--listen", "nonsense"}, "listen address"},
		{[]string{"--path", "readyz"}, "--path must start with /"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"healthcheck"}, tc.args...), noenv, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestHealthcheckAddr(t *testing.T) {
	for listen, want := range map[string]string{
		"":                "127.0.0.1:9870",
		"0.0.0.0:9870":    "127.0.0.1:9870",
		":9000":           "127.0.0.1:9000",
		"[::]:9870":       "[::1]:9870",
		"10.0.1.11:9870":  "10.0.1.11:9870",
		"localhost:9870":  "localhost:9870",
		"[::1]:9870":      "[::1]:9870",
		"127.0.0.2:12345": "127.0.0.2:12345",
	} {
		got, err := healthcheckAddr(listen, func(string) string { return "" })
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", listen, got, err, want)
		}
	}
}
