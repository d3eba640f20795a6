package processtest

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/server"
)

// TestRefreshConnectionBeforeTokenExpiry: a game server whose auth token
// is about to expire is sent RefreshConnection, moves to a new connection
// with the new token, and keeps hosting after the old token has expired.
func TestRefreshConnectionBeforeTokenExpiry(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			logs := &exectest.LogRecords{}
			opts := append(append([]apitest.Option{}, opts...), func(c *server.Config) {
				c.Log = slog.New(logs)
				c.HealthCheckInterval = time.Hour // the clock jumps by minutes; heartbeats come in real time
				c.AuthTokenTTL = 5 * time.Minute  // jumps stay within SigV4's 15-minute clock skew
			})
			e := start(t, opts)
			g := e.launch(t, "chat-r", false)
			e.waitProcesses(t, 1)

			e.clock.Advance(3*time.Minute + 30*time.Second) // within 2 minutes of the token's expiry
			e.Server.Service().Sweep(context.Background())
			eventually(t, "the old connection to close after the refresh", func() (bool, string) {
				return logs.Has(map[string]string{"msg": "process connection closed", "pid": "chat-r", "code": "1000"}), g.Out.String()
			})
			if strings.Contains(g.Out.String(), "RefreshConnection failed") {
				t.Fatalf("the game server could not refresh its connection:\n%s", g.Out.String())
			}

			e.clock.Advance(2 * time.Minute) // the first token has expired
			e.Server.Service().Sweep(context.Background())
			if p := e.process(t, e.fleet, "chat-r"); !p.Connected {
				t.Fatalf("process after the refresh: %+v", p)
			}
			id, err := e.createSession(t, 2)
			if err != nil {
				t.Fatal(err)
			}
			gs := e.waitSession(t, id, types.GameSessionStatusActive)
			ps := e.reserve(t, id, "erin")
			pl, got := join(t, gs, ps)
			if got != "OK" {
				t.Fatalf("joining after the refresh: %q", got)
			}
			pl.c.Close()
			e.waitSession(t, id, types.GameSessionStatusTerminated)
			if code := g.waitExit(t); code != 0 {
				t.Errorf("the game server exited with %d", code)
			}
		})
	}
}
