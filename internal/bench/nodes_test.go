package bench

// The queue placement benchmark on several nodes sharing one PostgreSQL:
// the same placements as BenchmarkQueuePlacement, with API calls and
// process connections spread over the nodes (so most pushes are forwarded
// between nodes).
//
//	go test ./internal/bench -run '^$' -bench QueuePlacementNodes -benchtime 300x
//
// Results are in docs/benchmarks.md ("Several nodes").

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	gl "github.com/anylift/anylift/sdk/server"
)

// nodesIdle is how many idle processes the several-nodes benchmark keeps
// beyond b.N (fewer than the single-node benchmark: three nodes share the
// machine).
const nodesIdle = 200

var (
	nodesEnvs    = map[int]*queueEnv{}
	nodesServers = map[int][]*server.Server{}
)

func nodesBenchEnv(b *testing.B, dsn string, n int) (*queueEnv, []*client) {
	queueMu.Lock()
	defer queueMu.Unlock()
	key := n
	if dsn == "" {
		key = 0
	}
	e, ok := nodesEnvs[key]
	if !ok {
		// One cluster at a time: PostgreSQL's connection limit is shared.
		for m, srvs := range nodesServers {
			for _, srv := range srvs {
				closeServer(srv)
			}
			delete(nodesServers, m)
			delete(nodesEnvs, m)
		}
		raiseFileLimit(b)
		schema := ""
		if dsn != "" {
			schema = freshSchema(b, dsn)
		}
		dir, err := os.MkdirTemp("", "anylift-bench-")
		if err != nil {
			b.Fatal(err)
		}
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
		var urls []string
		for range n {
			srv, err := server.Start(context.Background(), server.Config{
				Listen: "127.0.0.1:0", DataDir: dir, Store: schema, Region: apitest.Region, AccountID: accountID,
				Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, AuthTokenTTL: 24 * time.Hour,
				NodeListen: "127.0.0.1:0", NodeSecret: "bench-node-secret-0123456789",
				// The shared mode: every node writes every fleet
				// (BenchmarkQueuePlacementOwned measures ownership).
				FleetOwnership: server.OwnershipOff,
				Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				b.Fatal(err)
			}
			cleanups = append(cleanups, func() { closeServer(srv) })
			nodesServers[key] = append(nodesServers[key], srv)
			urls = append(urls, srv.URL())
		}
		f := newQueueFleet(b, urls[0], 3*len(queueLocations))
		f.Nodes = urls
		p := newPool(f, fmt.Sprintf("nodes%d", n))
		p.byName = true
		e = &queueEnv{fleet: f, pool: p}
		nodesEnvs[key] = e
	}
	var clients []*client
	for _, u := range e.fleet.Nodes {
		clients = append(clients, newClient(u))
	}
	return e, clients
}

func BenchmarkQueuePlacementNodes(b *testing.B) {
	dsn := os.Getenv("ANYLIFT_TEST_POSTGRES")
	if dsn == "" {
		b.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	for _, n := range []int{0, 1, 2, 3} {
		name, store := fmt.Sprintf("postgres-nodes-%d", n), dsn
		if n == 0 { // SQLite, one node, for comparison
			name, store = "sqlite-nodes-1", ""
		}
		b.Run(name, func(b *testing.B) {
			e, clients := nodesBenchEnv(b, store, max(n, 1))
			e.pool.fill(b, nodesIdle+b.N, 32)
			var mu sync.Mutex
			var used []*gl.Process
			var ids []string
			var turn atomic.Int64
			var work pgWork
			if store != "" {
				work = readPGWork(b, store)
			}
			cpu := readCPUWork(b)
			run(b, func(r *rand.Rand) error {
				id := fmt.Sprintf("bench-nodes%d-%d", n, placementSeq.Add(1))
				p, err := e.placeOnQueue(clients[int(turn.Add(1))%len(clients)], r, id)
				mu.Lock()
				ids = append(ids, id)
				if p != nil {
					used = append(used, p)
				}
				mu.Unlock()
				return err
			})
			reportCPUWork(b, cpu, b.N)
			if store != "" {
				reportPGWork(b, store, work, b.N)
			}
			checkFulfilled(b, clients[0], ids)
			e.pool.retire(used, 32)
		})
	}
}
