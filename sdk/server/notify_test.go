package server_test

import (
	"testing"

	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/sdk/server"
)

// seedGame records the session notifications in order.
type seedGame struct {
	calls   chan string
	healthy bool
	accept  bool
}

func (g *seedGame) notifications() server.Notifications {
	return server.Notifications{
		OnCreateSessionBegin:  func(gs server.GameSession) bool { g.calls <- "begin " + gs.GameSessionID; return g.accept },
		OnCreateSessionEnd:    func() { g.calls <- "end" },
		OnSessionHealthCheck:  func() bool { return g.healthy },
		OnDestroySessionBegin: func() bool { g.calls <- "destroy begin"; return true },
		OnDestroySessionEnd:   func() { g.calls <- "destroy end" },
	}
}

func (g *seedGame) want(t *testing.T, call string) {
	t.Helper()
	if got := <-g.calls; got != call {
		t.Fatalf("notification %q, want %q", got, call)
	}
}

func TestSessionNotificationsAndPassiveDestroy(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	g := &seedGame{calls: make(chan string, 10), healthy: false, accept: true}
	if err := p.NotifyProcessReady(7777, nil, g.notifications()); err != nil {
		t.Fatal(err)
	}
	if ev := env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess); ev.Request.(*sdkwire.HeartbeatServerProcess).HealthStatus {
		t.Error("OnSessionHealthCheck's false not reported")
	}
	startSession(t, env, "gs-1")
	g.want(t, "begin gs-1")
	g.want(t, "end")
	if st, _ := env.Backend.SessionStatus("gs-1"); st != "ACTIVE" {
		t.Fatalf("status %s: the SDK did not activate the session", st)
	}
	env.Backend.AddPlayerSession("gs-1", "psess-1", "player-1")
	env.Backend.AddPlayerSession("gs-1", "psess-2", "player-2")
	for _, id := range []string{"psess-1", "psess-2"} {
		if err := p.AcceptPlayerSession(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.RemovePlayerSession("psess-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.SessionDestroyed():
		t.Fatal("destroyed with a player left")
	default:
	}
	if err := p.RemovePlayerSession("psess-2"); err != nil {
		t.Fatal(err)
	}
	g.want(t, "destroy begin")
	g.want(t, "destroy end")
	<-p.SessionDestroyed()
	if st, _ := env.Backend.SessionStatus("gs-1"); st != "TERMINATED" {
		t.Errorf("status %s after the last player left", st)
	}
}

func TestPassiveDestroyCanBeSwitchedOff(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	g := &seedGame{calls: make(chan string, 10), healthy: true, accept: true}
	if err := p.NotifyProcessReady(7777, nil, g.notifications()); err != nil {
		t.Fatal(err)
	}
	p.SetPassiveDestroy(false)
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
	startSession(t, env, "gs-1")
	g.want(t, "begin gs-1")
	g.want(t, "end")
	env.Backend.AddPlayerSession("gs-1", "psess-1", "player-1")
	if err := p.AcceptPlayerSession("psess-1"); err != nil {
		t.Fatal(err)
	}
	if err := p.RemovePlayerSession("psess-1"); err != nil {
		t.Fatal(err)
	}
	// The service terminating the process still destroys the session.
	env.Server.Push(proc1, &sdkwire.TerminateProcess{TerminationTime: 1})
	g.want(t, "destroy begin")
	g.want(t, "destroy end")
}

func TestRefusedSessionIsDestroyed(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	g := &seedGame{calls: make(chan string, 10), healthy: true, accept: false}
	if err := p.NotifyProcessReady(7777, nil, g.notifications()); err != nil {
		t.Fatal(err)
	}
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
	startSession(t, env, "gs-1")
	g.want(t, "begin gs-1")
	g.want(t, "destroy begin")
	g.want(t, "destroy end")
	if st, _ := env.Backend.SessionStatus("gs-1"); st == "ACTIVE" {
		t.Error("a refused session was activated")
	}
}
