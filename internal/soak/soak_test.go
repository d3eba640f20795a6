package soak

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/storetestenv"
)

// config is the run's shape, from the environment.
type config struct {
	duration, sample, warmup time.Duration
	postgres                 bool
	drivers, readers, idle   int
	readRate                 float64
	out                      string // where the report, the server's log and the profiles go
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// soakConfig reads the configuration; the test is skipped unless
// ANYLIFT_SOAK names a duration.
func soakConfig(t *testing.T) config {
	d, err := time.ParseDuration(os.Getenv("ANYLIFT_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("a soak run: set ANYLIFT_SOAK to its duration (ANYLIFT_SOAK=30m go test ./internal/soak -run Soak -v -timeout 40m)")
	}
	c := config{duration: d, sample: envDuration("ANYLIFT_SOAK_SAMPLE", 30*time.Second),
		warmup: envDuration("ANYLIFT_SOAK_WARMUP", max(d/6, min(2*time.Minute, d/2))), postgres: os.Getenv("ANYLIFT_SOAK_STORE") == "postgres",
		drivers: envInt("ANYLIFT_SOAK_DRIVERS", 12), readers: envInt("ANYLIFT_SOAK_READERS", 4),
		idle: envInt("ANYLIFT_SOAK_PROCESSES", 24), readRate: float64(envInt("ANYLIFT_SOAK_READ_RATE", 20)),
		out: os.Getenv("ANYLIFT_SOAK_OUT")}
	if c.out == "" {
		c.out = t.TempDir()
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSoak runs "anylift serve" under mixed load for ANYLIFT_SOAK and
// fails if its goroutines, open files or RSS grow (see judge). Settings:
//
//	ANYLIFT_SOAK           duration of the load, e.g. 30m (unset: skipped)
//	ANYLIFT_SOAK_STORE     postgres: on a fresh schema of ANYLIFT_TEST_POSTGRES (default SQLite)
//	ANYLIFT_SOAK_SAMPLE    time between samples (30s)
//	ANYLIFT_SOAK_WARMUP    samples before it are not judged (a sixth of the run, at
//	                       least 2 minutes or half of it: SQLite's caches fill first)
//	ANYLIFT_SOAK_DRIVERS   concurrent matches (12)
//	ANYLIFT_SOAK_PROCESSES game server processes kept ready beyond those playing (24)
//	ANYLIFT_SOAK_READERS   reader loops (4), each making ANYLIFT_SOAK_READ_RATE calls/s (20)
//	ANYLIFT_SOAK_OUT       directory kept for report.md, server.log and pprof profiles
func TestSoak(t *testing.T) {
	cfg := soakConfig(t)
	dsn := ""
	if cfg.postgres {
		if dsn = storetestenv.PostgresDSN(t); dsn == "" {
			t.Fatal("ANYLIFT_SOAK_STORE=postgres needs ANYLIFT_TEST_POSTGRES")
		}
		dsn = storetestenv.FreshSchema(t, dsn)
	}
	srv := startServer(t, buildServer(t, t.TempDir()), cfg.out, dsn)
	t.Logf("server pid %d on %s; log %s", srv.cmd.Process.Pid, srv.url, srv.logPath)
	ctx := context.Background()
	st := newStats()
	l := setup(t, srv.url, st)
	l.p.target = cfg.idle
	rest := func(name string) gauges {
		g, err := srv.measure(ctx)
		if err != nil {
			t.Fatal(err)
		}
		srv.profile(ctx, "goroutine", 1, filepath.Join(cfg.out, "goroutines-"+name+".txt"))
		return g
	}
	before := rest("before")

	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	goLoad := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	goLoad(func() { l.p.keepFilled(loadCtx) })
	var events, lastSeq atomic.Int64
	goLoad(func() {
		for loadCtx.Err() == nil {
			seq, err := consumeEvents(loadCtx, srv.url, lastSeq.Load(), 0, func(n int64) { events.Add(1); lastSeq.Store(n) })
			lastSeq.Store(seq)
			st.record("GET /events (whole run)", err)
			if err != nil {
				time.Sleep(time.Second) // before reconnecting
			}
		}
	})
	goLoad(func() { l.churnLoop(loadCtx, srv.url, &lastSeq) })
	for i := range cfg.drivers {
		goLoad(func() { l.drive(loadCtx, uint64(i)) })
	}
	for i := range cfg.readers {
		goLoad(func() { l.readLoop(loadCtx, uint64(i), cfg.readRate) })
	}

	samples := sampleRun(t, cfg, srv, l, &events)
	srv.profile(ctx, "heap", 0, filepath.Join(cfg.out, "heap-end.pb.gz"))
	srv.profile(ctx, "goroutine", 1, filepath.Join(cfg.out, "goroutines-end.txt"))
	stopLoad()
	wg.Wait()
	l.p.closeAll()
	l.keepAlive.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(processLostGrace + 5*time.Second) // the server lets go of the last connections
	after := rest("after")

	report(t, cfg, st, l, samples, before, after)
	srv.stop(t)
}

// setup creates, through the API, two custom locations, an Anywhere fleet
// in both with four computes in each, and a queue in front of the fleet.
func setup(t *testing.T, url string, st *stats) *load {
	ctx := context.Background()
	c, tr := newClient(url, true, apitest.SecretKey)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	locs := []string{"custom-soak-a", "custom-soak-b"}
	var lc []types.LocationConfiguration
	for _, loc := range locs {
		must(c.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(loc)}))
		lc = append(lc, types.LocationConfiguration{Location: aws.String(loc)})
	}
	f, err := c.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("soak"), ComputeType: types.ComputeTypeAnywhere, Locations: lc})
	must(f, err)
	fleet := aws.ToString(f.FleetAttributes.FleetId)
	must(c.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("soak"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(fleet)}}}))
	churn, _ := newClient(url, false, apitest.SecretKey)
	l := &load{gl: c, keepAlive: tr, churn: churn, st: st, fleet: fleet, queue: "soak", locs: locs}
	l.p = &pool{url: "ws" + strings.TrimPrefix(url, "http"), fleet: fleet, gl: c, st: st,
		wait: map[string]chan activation{}, hosts: map[*host]bool{}}
	for i := range 8 {
		cp := &compute{name: fmt.Sprintf("host-%d", i), location: locs[i%2]}
		must(c.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(cp.name),
			Location: aws.String(cp.location), IpAddress: aws.String(fmt.Sprintf("10.0.0.%d", i+1))}))
		l.p.computes = append(l.p.computes, cp)
	}
	return l
}

// sampleRun measures the server every cfg.sample until cfg.duration has
// passed, saving profiles at the end of the warm-up.
func sampleRun(t *testing.T, cfg config, srv *server, l *load, events *atomic.Int64) []sample {
	ctx := context.Background()
	start := time.Now()
	prev, prevAt, prevMatches, prevEvents, prevFailures := l.st.totals(), start, int64(0), int64(0), l.st.failures()
	tick := time.NewTicker(cfg.sample)
	defer tick.Stop()
	var out []sample
	profiled := false
	for time.Since(start) < cfg.duration {
		select {
		case <-srv.done:
			t.Fatalf("the server exited during the run: %v (log in %s)", srv.err, srv.logPath)
		case <-tick.C:
		}
		g, err := srv.measure(ctx)
		if err != nil {
			t.Errorf("sample: %v", err)
			continue
		}
		now, tot, m, e := time.Now(), l.st.totals(), l.matches.Load(), events.Load()
		secs := now.Sub(prevAt).Seconds()
		s := sample{At: now.Sub(start), gauges: g, Calls: float64(tot.calls-prev.calls) / secs,
			Expected: tot.expected - prev.expected, Failed: tot.failed - prev.failed,
			Matches: float64(m-prevMatches) / secs, Events: float64(e-prevEvents) / secs, Load: loadAverage()}
		prev, prevAt, prevMatches, prevEvents = tot, now, m, e
		out = append(out, s)
		t.Logf("%s RSS %.1f MiB (anon %.1f), heap %.1f MiB, %d goroutines, %d fds, %d processes (%d in the harness), store %.1f MiB, %.0f calls/s, %.1f matches/s, failures %d on purpose, %d other, load %.1f",
			clock(s.At), float64(g.RSS)/mib, float64(g.RSSAnon)/mib, float64(g.Heap)/mib, g.Goroutines, g.FDs, g.Procs, l.p.live.Load(),
			float64(g.StoreBytes)/mib, s.Calls, s.Matches, s.Expected, s.Failed, s.Load)
		if f := l.st.failures(); s.Failed > 0 {
			t.Logf("     other failures: %s", since(prevFailures, f))
			prevFailures = f
		}
		if !profiled && s.At >= cfg.warmup {
			profiled = true
			srv.profile(ctx, "heap", 0, filepath.Join(cfg.out, "heap-warm.pb.gz"))
			srv.profile(ctx, "goroutine", 1, filepath.Join(cfg.out, "goroutines-warm.txt"))
		}
	}
	return out
}

// loadAverage is the machine's load average over the last minute (0 when
// unknown).
func loadAverage() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// report judges the run, logs and writes the report, and fails the test
// on growth, on what stayed after the load, or on too many failures.
func report(t *testing.T, cfg config, st *stats, l *load, samples []sample, before, after gauges) {
	store := "SQLite"
	if cfg.postgres {
		store = "PostgreSQL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Soak run: %v on %s, sample every %v, warm-up %v; %d match drivers, %d processes kept ready, %d readers at %.0f calls/s each; %d matches.\n\n",
		cfg.duration, store, cfg.sample, cfg.warmup, cfg.drivers, cfg.idle, cfg.readers, cfg.readRate, l.matches.Load())
	every := max(1, int(5*time.Minute/cfg.sample))
	b.WriteString("Samples (every " + clock(time.Duration(every)*cfg.sample) + "):\n\n" + table(samples, every) + "\n")
	vs, err := judge(samples, cfg.warmup)
	if err != nil {
		t.Error(err)
	} else {
		b.WriteString("Verdict:\n\n" + verdictTable(vs) + "\n")
	}
	fmt.Fprintf(&b, "At rest, before → after the load: %d → %d goroutines, %d → %d open fds, RSS %.1f → %.1f MiB (anonymous %.1f → %.1f), heap %.1f → %.1f MiB\n\n",
		before.Goroutines, after.Goroutines, before.FDs, after.FDs, float64(before.RSS)/mib, float64(after.RSS)/mib,
		float64(before.RSSAnon)/mib, float64(after.RSSAnon)/mib, float64(before.Heap)/mib, float64(after.Heap)/mib)
	b.WriteString(st.report())
	b.WriteString("\nAll samples:\n\n" + table(samples, 1))
	t.Log("\n" + b.String())
	path := filepath.Join(cfg.out, "report.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("report, server log and profiles in %s", cfg.out)

	for _, v := range vs {
		if !v.ok {
			t.Errorf("%s grew from %.1f to %.1f after warm-up (%+.1f %%, %+.1f per hour); allowed +%.1f", v.name, v.start, v.end,
				v.pctGrowth(), v.perHour, v.allowed)
		}
	}
	poolFDs := int64(0)
	if cfg.postgres {
		poolFDs = 32 // internal/store/postgres keeps up to 32 connections open
	}
	for _, msg := range idleCheck(before, after, poolFDs) {
		t.Error(msg)
	}
	if tot := st.totals(); tot.failed*100 > tot.calls {
		t.Errorf("%d of %d calls failed unexpectedly (more than 1 %%)", tot.failed, tot.calls)
	}
}
