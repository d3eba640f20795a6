package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBinaryServesPlayerGateway: "anylift serve" with a player token
// secret opens the gateway on its own listener, which refuses a request
// without a token with a typed JSON error and serves no admin route.
func TestBinaryServesPlayerGateway(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	secret := writeFile(t, "player-secret", strings.Repeat("k", 48))
	gateway := serveGateway(ctx, t, bin, "--player-jwt-hs256-secret-file", secret)
	resp, err := http.Post(gateway+"/v1/sessions/search", "application/json", strings.NewReader(`{"FleetId":"fleet-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"Code":"MissingToken"`) {
		t.Fatalf("search without a token: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(gateway + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an admin route answered %d on the player gateway", resp.StatusCode)
	}
}

// serveGateway starts "anylift serve" with a player gateway and the given
// flags, kills it at cleanup, and returns the gateway's URL as it prints
// it.
func serveGateway(ctx context.Context, t *testing.T, bin string, flags ...string) string {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "", "--data-dir", t.TempDir(),
		"--access-key", "AKIDBIN", "--secret-key", "secret", "--player-listen", "127.0.0.1:0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, stderr := startPiped(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no player gateway line (%v); stderr:\n%s", err, stderr.String())
		}
		if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "player gateway on "); ok {
			go io.Copy(io.Discard, r)
			return addr
		}
	}
}
