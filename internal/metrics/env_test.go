package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// clock is a settable clock for the server.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

const location = "custom-lab"

// env is a server on a settable clock with an Anywhere fleet.
type env struct {
	t     *testing.T
	api   *apitest.Env
	clock *clock
	gl    *gamelift.Client
	fleet string
}

func newEnv(t *testing.T, opts ...apitest.Option) *env {
	t.Helper()
	clk := &clock{now: time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)}
	opts = append([]apitest.Option{func(c *server.Config) { c.Now = clk.Now }}, opts...)
	a := apitest.Start(t, opts...)
	e := &env{t: t, api: a, clock: clk, gl: a.Client()}
	ctx := context.Background()
	if _, err := e.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	out, err := e.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("lab"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}}})
	if err != nil {
		t.Fatal(err)
	}
	e.fleet = aws.ToString(out.FleetAttributes.FleetId)
	return e
}

// process registers compute name and starts a Go SDK process on it.
func (e *env) process(compute, pid string) *sdk.Process {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(e.fleet),
		ComputeName: aws.String(compute), Location: aws.String(location), IpAddress: aws.String("10.0.0.5")}); err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(compute)})
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: e.api.Server.SDKEndpoint(), ProcessID: pid, HostID: compute,
		FleetID: e.fleet, AuthToken: aws.ToString(tok.AuthToken)}, sdk.Options{
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

// session creates a game session once the process takes one, and
// activates it.
func (e *env) session(p *sdk.Process, name string) string {
	e.t.Helper()
	var gs *gamelift.CreateGameSessionOutput
	waitFor(e.t, "a free process", func() bool {
		var err error
		gs, err = e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(e.fleet),
			Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(4), Name: aws.String(name)})
		return err == nil
	})
	waitFor(e.t, "the session to reach the process", func() bool { return p.ActivateGameSession() == nil })
	return aws.ToString(gs.GameSession.GameSessionId)
}

// waitFor polls cond until it holds, failing after 10 s: for state that
// another goroutine (the endpoint, the SDK) changes.
func waitFor(t *testing.T, what string, cond func() bool) {
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

// scrape reads /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value finds the sample of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func hasPrefix(fams map[string]*dto.MetricFamily, prefix string) bool {
	for name := range fams {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
