package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/agent"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
)

// chatBinary is the example game server and sdklessBinary a game server
// without an SDK (testdata/sdkless), built once by TestMain.
var chatBinary, sdklessBinary string

func TestMain(m *testing.M) {
	os.Exit(exectest.Main(m, map[string]*string{"examples/chat": &chatBinary, "internal/agent/testdata/sdkless": &sdklessBinary}))
}

const (
	location  = "custom-agent"
	compute   = "machine-1"
	waitLimit = 30 * time.Second
)

// recorder keeps the agent's events for the test to wait on.
type recorder struct {
	mu      sync.Mutex
	events  []agent.Event
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) add(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

// count returns how many events match, and a channel closed at the next
// event.
func (r *recorder) count(match func(agent.Event) bool) (int, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if match(e) {
			n++
		}
	}
	return n, r.changed
}

// wait blocks until n events match and returns the n-th.
func (r *recorder) wait(t testing.TB, what string, n int, match func(agent.Event) bool) agent.Event {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		got, changed := r.count(match)
		if got >= n {
			r.mu.Lock()
			defer r.mu.Unlock()
			seen := 0
			for _, e := range r.events {
				if match(e) {
					if seen++; seen == n {
						return e
					}
				}
			}
		}
		select {
		case <-changed:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("waiting for %d× %s; events: %+v", n, what, r.events)
		}
	}
}

func kind(k string) func(agent.Event) bool { return func(e agent.Event) bool { return e.Kind == k } }

// env is a running service with an Anywhere fleet.
type env struct {
	*apitest.Env
	gl     *gamelift.Client
	clock  *testclock.Offset
	fleet  string
	logDir string
}

func start(t testing.TB, opts ...apitest.Option) *env {
	t.Helper()
	c := &testclock.Offset{}
	opts = append(opts, func(cfg *server.Config) {
		cfg.Now = c.Now
		cfg.HealthCheckInterval = time.Hour // the clock jumps by minutes; heartbeats come in real time
	})
	e := &env{Env: apitest.Start(t, opts...), clock: c, logDir: t.TempDir()}
	e.gl = e.Client()
	e.fleet = apitest.AnywhereFleet(t, e.gl, location, "agent")
	return e
}

// setRuntime sets the fleet's runtime configuration to n copies of path.
func (e *env) setRuntime(t testing.TB, path, params string, n int32) {
	t.Helper()
	sp := types.ServerProcess{LaunchPath: aws.String(path), ConcurrentExecutions: aws.Int32(n)}
	if params != "" {
		sp.Parameters = aws.String(params)
	}
	_, err := e.gl.UpdateRuntimeConfiguration(context.Background(), &gamelift.UpdateRuntimeConfigurationInput{
		FleetId: aws.String(e.fleet), RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{sp}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// outageProxy starts a proxy to the service that answers 503 while down
// is set; it is closed at cleanup, after the agents started later stop.
func (e *env) outageProxy(t testing.TB) (endpoint string, down *atomic.Bool) {
	t.Helper()
	target, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	down = &atomic.Bool{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL, down
}

// running is an agent running in the background.
type running struct {
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
}

// runAgent starts an agent on the env's fleet; it is stopped at cleanup.
func (e *env) runAgent(t testing.TB, adjust ...func(*agent.Config)) *running {
	t.Helper()
	rec := newRecorder()
	cfg := agent.Config{
		Endpoint: e.URL, Region: apitest.Region, AccessKey: apitest.AccessKey, SecretKey: apitest.SecretKey,
		FleetID: e.fleet, ComputeName: compute, Location: location, IPAddress: "127.0.0.1",
		LogDir: e.logDir, StopTimeout: 10 * time.Second,
		Now: e.clock.Now, Wake: e.clock.Wake, Observe: rec.add,
	}
	for _, f := range adjust {
		f(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{rec: rec, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels the agent and waits for Run to return.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // later calls see it too
		return err
	case <-time.After(waitLimit):
		t.Fatal("the agent did not stop")
		return nil
	}
}

// waitActive waits until the fleet has n ACTIVE server processes.
func (e *env) waitActive(t testing.TB, n int32) {
	t.Helper()
	exectest.Eventually(t, fmt.Sprintf("%d active server processes", n), waitLimit, func() (bool, string) {
		out, err := e.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{e.fleet}})
		if err != nil {
			t.Fatal(err)
		}
		got := aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount)
		return got == n, fmt.Sprintf("have %d", got)
	})
}

// events returns the fleet's events with code.
func (e *env) events(t testing.TB, code string) []types.Event {
	t.Helper()
	out, err := e.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(e.fleet), Limit: aws.Int32(100)})
	if err != nil {
		t.Fatal(err)
	}
	var list []types.Event
	for _, ev := range out.Events {
		if string(ev.EventCode) == code {
			list = append(list, ev)
		}
	}
	return list
}
