package bench

// The issue 3 benchmark: full placement with 1,000+ connected server
// processes, and the server's memory per idle connected process.
//
//	go test ./internal/bench -run '^$' -bench Placement -benchtime 3000x
//	go test ./internal/bench -run '^$' -bench IdleProcessMemory -benchtime 1x
//
// Results, method and machine are in docs/benchmarks.md ("Full placement").

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/server"
	gl "github.com/anylift/anylift/sdk/server"
)

// MinIdleProcesses is how many free server processes stay connected
// beside those a run uses: every run starts with MinIdleProcesses + b.N
// processes connected at once.
const MinIdleProcesses = 1000

// placementComputes is how many computes the processes spread over.
const placementComputes = 10

// placement is a server with an Anywhere fleet and a pool of ready Go
// server SDK processes, kept for the whole run per backend.
type placement struct {
	srv    *server.Server
	fleet  *benchFleet
	pool   *pool
	stages stages
}

var (
	placementMu   sync.Mutex
	placementEnvs = map[string]*placement{}
)

func placementEnv(b *testing.B, backend string, st procStore) *placement {
	placementMu.Lock()
	defer placementMu.Unlock()
	if e, ok := placementEnvs[backend]; ok {
		return e
	}
	raiseFileLimit(b)
	srv := startProcServer(b, st.url, st.sync)
	f := newBenchFleet(b, srv.URL(), placementComputes)
	e := &placement{srv: srv, fleet: f, pool: newPool(f, "place-"+backend)}
	placementEnvs[backend] = e
	return e
}

// procStore is a store configuration the process benchmarks run on.
type procStore struct {
	name string
	url  string // --store: empty for SQLite
	sync string // SQLite's synchronous pragma
}

// procStores are SQLite as configured by default (synchronous FULL: a
// WAL sync at every commit), SQLite with synchronous NORMAL (no sync at
// commit; survives kill -9, not power loss), and PostgreSQL when
// ANYLIFT_TEST_POSTGRES is set.
func procStores() []procStore {
	out := []procStore{{name: "sqlite"}, {name: "sqlite-normal", sync: "NORMAL"}}
	if dsn := postgresDSN(); dsn != "" {
		out = append(out, procStore{name: "postgres", url: dsn})
	}
	return out
}

// BenchmarkPlacement measures full placements: CreateGameSession (signed
// JSON 1.1) → the process's ActivateGameSession answered (the session is
// ACTIVE) → CreatePlayerSession → AcceptPlayerSession by the process. Each
// placement takes a fresh process (one session per process life): the
// pool is filled to MinIdleProcesses + b.N before the timer starts, and
// the used processes end (ProcessEnding, Destroy) after it stops.
func BenchmarkPlacement(b *testing.B) {
	for _, st := range procStores() {
		b.Run(st.name, func(b *testing.B) {
			e := placementEnv(b, st.name, st)
			e.pool.fill(b, MinIdleProcesses+b.N, 32)
			connected := len(e.pool.idle)
			c := newClient(e.fleet.URL)
			var mu sync.Mutex
			var used []*gl.Process
			cpu := readCPUWork(b)
			run(b, func(r *rand.Rand) error {
				p, err := e.place(c, r)
				if p != nil {
					mu.Lock()
					used = append(used, p)
					mu.Unlock()
				}
				return err
			})
			reportSelfCPU(b, cpu, b.N)
			b.ReportMetric(float64(connected), "procs")
			e.stages.report(b)
			e.pool.retire(used, 32)
		})
		endPlacement(st.name)
	}
}

// endPlacement ends the environment of backend once its benchmark is done
// (every round of it): its processes and server would otherwise share the
// cores with the benchmarks after it.
func endPlacement(backend string) {
	placementMu.Lock()
	e := placementEnvs[backend]
	delete(placementEnvs, backend)
	placementMu.Unlock()
	if e == nil {
		return
	}
	e.pool.mu.Lock()
	idle := e.pool.idle
	e.pool.idle = nil
	e.pool.mu.Unlock()
	closeAll(idle, 32, func(x *gl.Process) { x.Destroy() })
	closeServer(e.srv)
}

// place runs one full placement and returns the process that hosts it.
func (e *placement) place(c *client, r *rand.Rand) (*gl.Process, error) {
	t0 := time.Now()
	var gs struct {
		GameSession struct{ GameSessionId string }
	}
	err := c.do("CreateGameSession", fmt.Appendf(nil, `{"FleetId": %q, "Location": %q, "MaximumPlayerSessionCount": 8}`, e.fleet.FleetID, e.fleet.Location), &gs)
	if err != nil {
		return nil, err
	}
	id := gs.GameSession.GameSessionId
	t1 := time.Now()
	proc, err := e.pool.awaitActive(id)
	if err != nil {
		return proc, err
	}
	t2 := time.Now()
	var ps struct {
		PlayerSession struct{ PlayerSessionId string }
	}
	err = c.do("CreatePlayerSession", fmt.Appendf(nil, `{"GameSessionId": %q, "PlayerId": "player-%d"}`, id, r.Uint64()), &ps)
	if err != nil {
		return proc, err
	}
	t3 := time.Now()
	if err := proc.AcceptPlayerSession(ps.PlayerSession.PlayerSessionId); err != nil {
		return proc, fmt.Errorf("AcceptPlayerSession: %w", err)
	}
	e.stages.add(t0, t1, t2, t3, time.Now())
	return proc, nil
}

// profileTimed writes a CPU profile of the timed part of a run to
// $ANYLIFT_BENCH_CPUPROFILE.<name> when that variable is set (go test's
// -cpuprofile would include connecting the pool). It returns the stop
// function.
func profileTimed(b *testing.B, name string) func() {
	base := os.Getenv("ANYLIFT_BENCH_CPUPROFILE")
	if base == "" {
		return func() {}
	}
	f, err := os.Create(base + "." + name)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("ANYLIFT_BENCH_TRACE") != "" {
		if err := trace.Start(f); err != nil {
			b.Fatal(err)
		}
		return func() { trace.Stop(); f.Close() }
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// stages collects how long each step of the placements took: create
// (CreateGameSession answered), activate (until the process's
// ActivateGameSession was answered), reserve (CreatePlayerSession) and
// accept (AcceptPlayerSession answered).
type stages struct {
	mu  sync.Mutex
	lat [4][]time.Duration
}

func (s *stages) add(t ...time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.lat {
		s.lat[i] = append(s.lat[i], t[i+1].Sub(t[i]))
	}
}

// report adds each step's p50 to the benchmark's metrics and starts over.
func (s *stages) report(b *testing.B) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, name := range []string{"create", "activate", "reserve", "accept"} {
		l := s.lat[i]
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		b.ReportMetric(float64(l[len(l)/2].Microseconds()), name+"-p50-µs")
		s.lat[i] = nil
	}
}
