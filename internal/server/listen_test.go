package server_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
)

// TestBusyPortSaysWhatToDo: a taken port is refused with the flag, the
// address and the likely cause, and leaves the data directory free for
// the next start.
func TestBusyPortSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg := server.Config{Listen: taken.Addr().String(), DataDir: dir, Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}}
	_, err = server.Start(context.Background(), cfg)
	want := "--listen " + taken.Addr().String() + ": the address is in use, most likely by another anylift already running"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("start on a taken port: %v; want %q", err, want)
	}
	apitest.Start(t, func(c *server.Config) { c.DataDir = dir })
}

// TestReadyz: a node that serves answers /readyz 200 "ready" beside
// /healthz's "ok" and /livez's "alive".
func TestReadyz(t *testing.T) {
	env := apitest.Start(t)
	for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n", "/livez": "alive\n"} {
		resp, err := http.Get(env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Errorf("%s: %d %q, want 200 %q", path, resp.StatusCode, b, want)
		}
	}
}

// TestPlayerGatewaySpeaksTLS: game clients reach the player gateway over
// TLS on the same port as plain HTTP, and get the same answers.
func TestPlayerGatewaySpeaksTLS(t *testing.T) {
	env := apitest.Start(t, func(c *server.Config) {
		c.PlayerListen = "127.0.0.1:0"
		c.Player.Auth.DevMode = true
	})
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var answers []string
	for _, c := range []struct {
		scheme string
		client *http.Client
	}{{"http", http.DefaultClient}, {"https", insecure}} {
		resp, err := c.client.Get(c.scheme + "://" + env.Server.PlayerAddr() + "/v1/unknown")
		if err != nil {
			t.Fatalf("%s: %v", c.scheme, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if (c.scheme == "https") != (resp.TLS != nil) {
			t.Errorf("%s: TLS state %v", c.scheme, resp.TLS)
		}
		answers = append(answers, fmt.Sprint(resp.StatusCode, " ", string(b)))
	}
	if answers[0] != answers[1] {
		t.Errorf("plain and TLS answers differ:\n%s\n%s", answers[0], answers[1])
	}
}
