package lifecycle_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// goProcess is a process built with the Go server SDK, in this test binary.
type goProcess struct {
	p         *sdk.Process
	started   chan sdk.GameSession
	updated   chan sdk.UpdateGameSession
	terminate chan struct{}
}

func (h *harness) goProcess(compute, pid, token string) *goProcess {
	h.t.Helper()
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: h.env.Server.SDKEndpoint(), ProcessID: pid, HostID: compute,
		FleetID: h.fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1,
		HealthCheckInterval: time.Hour, DrainTimeout: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { p.Destroy() })
	g := &goProcess{p: p, started: make(chan sdk.GameSession, 1), updated: make(chan sdk.UpdateGameSession, 4), terminate: make(chan struct{}, 1)}
	err = p.ProcessReady(sdk.ProcessParameters{Port: 9000,
		OnStartGameSession:  func(gs sdk.GameSession) { g.started <- gs },
		OnUpdateGameSession: func(u sdk.UpdateGameSession) { g.updated <- u },
		OnProcessTerminate:  func() { g.terminate <- struct{}{} },
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return g
}

func receive[T any](t *testing.T, what string, c chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func TestGoSDKProcessLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		g := h.goProcess("host-1", "go-1", h.compute("host-1", "10.0.0.5"))
		var gs *types.GameSession
		waitFor(t, "the process to take a game session", func() bool {
			var err error
			gs, err = h.create(&gamelift.CreateGameSessionInput{GameSessionData: aws.String("data"),
				GameProperties: []types.GameProperty{{Key: aws.String("k"), Value: aws.String("v")}}})
			return err == nil
		})
		id := aws.ToString(gs.GameSessionId)
		started := receive(t, "OnStartGameSession", g.started)
		if started.GameSessionID != id || started.GameProperties["k"] != "v" || started.GameSessionData != "data" ||
			started.Port != 9000 || started.IPAddress != "10.0.0.5" || started.FleetID != h.fleet {
			t.Errorf("OnStartGameSession got %+v", started)
		}
		if err := g.p.ActivateGameSession(); err != nil {
			t.Fatal(err)
		}
		h.wantSession(id, types.GameSessionStatusActive, "")

		ps := h.reserve(id, "bob")
		if err := g.p.AcceptPlayerSession(ps); err != nil {
			t.Fatal(err)
		}
		if got := h.playerStatus(ps); got != types.PlayerSessionStatusActive {
			t.Errorf("after AcceptPlayerSession: %s", got)
		}
		if err := g.p.RemovePlayerSession(ps); err != nil {
			t.Fatal(err)
		}
		if got := h.playerStatus(ps); got != types.PlayerSessionStatusCompleted {
			t.Errorf("after RemovePlayerSession: %s", got)
		}

		// Two minutes before the token expires, the process is given a new
		// one and reconnects with it.
		before := h.process("host-1", "go-1").TokenExpires
		h.advance(13*time.Minute + time.Second)
		waitFor(t, "the refreshed connection", func() bool {
			p := h.process("host-1", "go-1")
			return p.Connected && p.TokenExpires.After(before.Add(12*time.Minute))
		})
		if _, err := h.gl.UpdateGameSession(t.Context(), &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id),
			MaximumPlayerSessionCount: aws.Int32(6)}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.gl.TerminateGameSession(t.Context(), &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id),
			TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
			t.Fatal(err)
		}
		receive(t, "OnProcessTerminate", g.terminate)
		select { // a plain UpdateGameSession is not pushed (TestPlainUpdateGameSessionIsNotPushed)
		case u := <-g.updated:
			t.Errorf("OnUpdateGameSession after a plain UpdateGameSession: %+v", u)
		default:
		}
		if err := g.p.ProcessEnding(); err != nil {
			t.Fatal(err)
		}
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonTriggeredOnProcessTerminate)
		g.p.Destroy()
		h.advance(time.Minute)
		h.wantEvents(h.fleet) // a normal exit writes no event
	}, func(c *server.Config) {
		// The SDK reports health on real time; the test moves the clock
		// 13 minutes without it.
		c.HealthCheckInterval = time.Hour
	})
}
