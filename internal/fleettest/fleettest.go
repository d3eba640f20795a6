// Package fleettest starts a real server on a settable clock with an
// Anywhere fleet, real Go SDK processes and game sessions, for the tests
// of the metrics and the console.
package fleettest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// Clock is a settable clock for the server.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *Clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// Location is the fleet's custom location.
const Location = "custom-lab"

// Env is a server on a settable clock with an Anywhere fleet.
type Env struct {
	t     testing.TB
	API   *apitest.Env
	Clock *Clock
	GL    *gamelift.Client
	Fleet string
}

// New starts the server (apitest options apply) and creates the fleet.
func New(t testing.TB, opts ...apitest.Option) *Env {
	t.Helper()
	clk := &Clock{now: time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)}
	opts = append([]apitest.Option{func(c *server.Config) { c.Now = clk.Now }}, opts...)
	a := apitest.Start(t, opts...)
	e := &Env{t: t, API: a, Clock: clk, GL: a.Client()}
	e.Fleet = apitest.AnywhereFleet(t, e.GL, Location, "lab")
	return e
}

// Process registers compute name and starts a Go SDK process on it.
func (e *Env) Process(compute, pid string) *sdk.Process {
	e.t.Helper()
	token := apitest.RegisterCompute(e.t, e.GL, e.Fleet, Location, compute, "10.0.0.5")
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: e.API.Server.SDKEndpoint(), ProcessID: pid, HostID: compute,
		FleetID: e.Fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1,
		HealthCheckInterval: time.Hour, DrainTimeout: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { p.Destroy() })
	if err := p.ProcessReady(sdk.ProcessParameters{Port: 9000, OnStartGameSession: func(sdk.GameSession) {}}); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// Session creates a game session once the process takes one, and
// activates it.
func (e *Env) Session(p *sdk.Process, name string) string {
	e.t.Helper()
	return e.SessionWith(p, &gamelift.CreateGameSessionInput{Name: aws.String(name)})
}

// SessionWith is Session with more of CreateGameSession's input; fleet,
// location and seats (4) are filled in when unset.
func (e *Env) SessionWith(p *sdk.Process, in *gamelift.CreateGameSessionInput) string {
	e.t.Helper()
	if in.FleetId == nil {
		in.FleetId = aws.String(e.Fleet)
	}
	if in.Location == nil {
		in.Location = aws.String(Location)
	}
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = aws.Int32(4)
	}
	var gs *gamelift.CreateGameSessionOutput
	WaitFor(e.t, "a free process", func() bool {
		var err error
		gs, err = e.GL.CreateGameSession(context.Background(), in)
		return err == nil
	})
	WaitFor(e.t, "the session to reach the process", func() bool { return p.ActivateGameSession() == nil })
	return aws.ToString(gs.GameSession.GameSessionId)
}

// WaitFor polls cond until it holds, failing after 10 s: for state that
// another goroutine (the endpoint, the SDK) changes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}
