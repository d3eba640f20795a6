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
	"sync"
	"testing"

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
	fleet *benchFleet
	pool  *pool
}

var (
	placementMu   sync.Mutex
	placementEnvs = map[string]*placement{}
)

func placementEnv(b *testing.B, backend, storeURL string) *placement {
	placementMu.Lock()
	defer placementMu.Unlock()
	if e, ok := placementEnvs[backend]; ok {
		return e
	}
	raiseFileLimit(b)
	srv := startProcServer(b, storeURL)
	f := newBenchFleet(b, srv.URL(), placementComputes)
	e := &placement{fleet: f, pool: newPool(f, "place-"+backend)}
	placementEnvs[backend] = e
	return e
}

// BenchmarkPlacement measures full placements: CreateGameSession (signed
// JSON 1.1) → the process's ActivateGameSession answered (the session is
// ACTIVE) → CreatePlayerSession → AcceptPlayerSession by the process. Each
// placement takes a fresh process (one session per process life): the
// pool is filled to MinIdleProcesses + b.N before the timer starts, and
// the used processes end (ProcessEnding, Destroy) after it stops.
func BenchmarkPlacement(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			e := placementEnv(b, name, storeURL)
			e.pool.fill(b, MinIdleProcesses+b.N, 32)
			connected := len(e.pool.idle)
			c := newClient(e.fleet.URL)
			var mu sync.Mutex
			var used []*gl.Process
			run(b, func(r *rand.Rand) error {
				p, err := e.place(c, r)
				if p != nil {
					mu.Lock()
					used = append(used, p)
					mu.Unlock()
				}
				return err
			})
			b.ReportMetric(float64(connected), "procs")
			e.pool.retire(used, 32)
		})
	}
}

// place runs one full placement and returns the process that hosts it.
func (e *placement) place(c *client, r *rand.Rand) (*gl.Process, error) {
	var gs struct {
		GameSession struct{ GameSessionId string }
	}
	err := c.do("CreateGameSession", fmt.Appendf(nil, `{"FleetId": %q, "Location": %q, "MaximumPlayerSessionCount": 8}`, e.fleet.FleetID, e.fleet.Location), &gs)
	if err != nil {
		return nil, err
	}
	id := gs.GameSession.GameSessionId
	proc, err := e.pool.awaitActive(id)
	if err != nil {
		return proc, err
	}
	var ps struct {
		PlayerSession struct{ PlayerSessionId string }
	}
	err = c.do("CreatePlayerSession", fmt.Appendf(nil, `{"GameSessionId": %q, "PlayerId": "player-%d"}`, id, r.Uint64()), &ps)
	if err != nil {
		return proc, err
	}
	if err := proc.AcceptPlayerSession(ps.PlayerSession.PlayerSessionId); err != nil {
		return proc, fmt.Errorf("AcceptPlayerSession: %w", err)
	}
	return proc, nil
}
