package lifecycle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

// clock is a settable clock for the server.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const testLocation = "custom-lab"

// harness is a running server with an Anywhere fleet in testLocation.
type harness struct {
	t     *testing.T
	env   *apitest.Env
	clock *clock
	gl    *gamelift.Client
	fleet string
}

// eachBackend runs fn on a fresh harness per store backend.
func eachBackend(t *testing.T, fn func(t *testing.T, h *harness), opts ...apitest.Option) {
	for name, bopts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			fn(t, newHarness(t, append(bopts, opts...)...))
		})
	}
}

func newHarness(t *testing.T, opts ...apitest.Option) *harness {
	t.Helper()
	clk := &clock{now: time.Now().UTC().Truncate(time.Millisecond)}
	opts = append([]apitest.Option{func(c *server.Config) {
		c.Now = clk.Now
		c.ManualTimers = true // the timers run at h.sweep only
		c.ProcessLostGrace = 30 * time.Second
	}}, opts...)
	env := apitest.Start(t, opts...)
	h := &harness{t: t, env: env, clock: clk, gl: env.Client()}
	h.fleet = apitest.AnywhereFleet(t, h.gl, testLocation, "lab")
	return h
}

// compute registers a compute with ip and returns a fresh auth token for it.
func (h *harness) compute(name, ip string) string {
	h.t.Helper()
	return apitest.RegisterCompute(h.t, h.gl, h.fleet, testLocation, name, ip)
}

// token is a new auth token for compute name.
func (h *harness) token(name string) string {
	h.t.Helper()
	return apitest.ComputeToken(h.t, h.gl, h.fleet, name)
}

// sweep runs the service's timers once, at the harness clock.
func (h *harness) sweep() {
	h.t.Helper()
	h.env.Server.Service().Sweep(context.Background())
}

// advance moves the clock by d and runs the timers.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Add(d)
	h.sweep()
}

// create calls CreateGameSession on the fleet in testLocation.
func (h *harness) create(in *gamelift.CreateGameSessionInput) (*types.GameSession, error) {
	if in == nil {
		in = &gamelift.CreateGameSessionInput{}
	}
	if in.FleetId == nil && in.AliasId == nil {
		in.FleetId = aws.String(h.fleet)
	}
	if in.Location == nil {
		in.Location = aws.String(testLocation)
	}
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = aws.Int32(4)
	}
	out, err := h.gl.CreateGameSession(context.Background(), in)
	if err != nil {
		return nil, err
	}
	return out.GameSession, nil
}

// mustCreate is create that fails the test on error.
func (h *harness) mustCreate(in *gamelift.CreateGameSessionInput) *types.GameSession {
	h.t.Helper()
	gs, err := h.create(in)
	if err != nil {
		h.t.Fatalf("CreateGameSession: %v", err)
	}
	return gs
}

// session describes one game session.
func (h *harness) session(id string) types.GameSession {
	h.t.Helper()
	out, err := h.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil {
		h.t.Fatal(err)
	}
	if len(out.GameSessions) != 1 {
		h.t.Fatalf("DescribeGameSessions(%s): %d sessions", id, len(out.GameSessions))
	}
	return out.GameSessions[0]
}

// process reads a process record from the store.
func (h *harness) process(compute, pid string) *game.Process {
	h.t.Helper()
	var p *game.Process
	err := h.env.Server.Store().View(context.Background(), func(tx store.Tx) error {
		var err error
		p, err = tx.GetProcess(h.fleet, compute, pid)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// eventCodes lists the fleet's event codes, oldest first.
func (h *harness) events() []types.Event {
	h.t.Helper()
	out, err := h.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(h.fleet)})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.Events
}

// eventsWith returns the fleet's events with code.
func (h *harness) eventsWith(code types.EventCode) []types.Event {
	var out []types.Event
	for _, e := range h.events() {
		if e.EventCode == code {
			out = append(out, e)
		}
	}
	return out
}

// waitFor polls cond until it holds, failing the test after 10 s. For
// state another goroutine (the endpoint, an SDK) changes.
var waitFor = fleettest.WaitFor

// apiErrorCode is the exception name of an API error, or "".
func apiErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// wantAPIError fails unless err is the exception code.
func wantAPIError(t *testing.T, err error, code string) {
	t.Helper()
	if got := apiErrorCode(err); got != code {
		t.Fatalf("error = %v (%q), want %s", err, got, code)
	}
}
