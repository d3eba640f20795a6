package sdktest

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/sdkserver"
)

// Env is an endpoint serving plain WebSockets on 127.0.0.1:0.
type Env struct {
	Backend *Backend
	Server  *sdkserver.Server
	URL     string // ws://127.0.0.1:port
}

// Start starts an endpoint over a new Backend; cfg's Auth and Backend are
// filled in. Both stop when the test ends.
func Start(t testing.TB, cfg sdkserver.Config) *Env {
	t.Helper()
	b := NewBackend()
	cfg.Auth, cfg.Backend = b, b
	s := sdkserver.New(cfg)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return &Env{Backend: b, Server: s, URL: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

// Wait reads b.Events until one with action arrives and returns it; it
// fails the test if none comes within a minute (a guard, not a wait).
func (b *Backend) Wait(t testing.TB, action string) Event {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case e := <-b.Events:
			if e.Action == action {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s event", action)
		}
	}
}
