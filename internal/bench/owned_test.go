package bench

// Queue placement on several nodes with fleet ownership: fleetsOwned
// fleets, each the destination of its own queue, spread over the nodes by
// their leases; placements go to the queues in turn through the nodes in
// turn, and game servers connect to the nodes in turn (each is relayed to
// its fleet's owner).
//
//	go test ./internal/bench -run '^$' -bench QueuePlacementOwned -benchtime 600x
//
// ANYLIFT_BENCH_LOG=1 logs what the nodes do (at info) to stderr.
//
// Results are in docs/benchmarks.md ("Several nodes").

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	gl "github.com/anylift/anylift/sdk/server"
)

// fleetsOwned is how many fleets (and queues) the ownership benchmark
// spreads over its nodes.
const fleetsOwned = 6

type ownedEnv struct {
	fleets  []*queueEnv
	nodes   []*server.Server
	clients []*client
}

var ownedEnvs = map[int]*ownedEnv{}

func ownedBenchEnv(b *testing.B, dsn string, n int) *ownedEnv {
	queueMu.Lock()
	defer queueMu.Unlock()
	if e, ok := ownedEnvs[n]; ok {
		return e
	}
	// One cluster at a time: PostgreSQL's connection limit is shared.
	for m, e := range ownedEnvs {
		for _, srv := range e.nodes {
			closeServer(srv)
		}
		delete(ownedEnvs, m)
	}
	raiseFileLimit(b)
	schema := freshSchema(b, dsn)
	dir, err := os.MkdirTemp("", "anylift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	e := &ownedEnv{}
	var urls []string
	for i := range n {
		log := slog.New(slog.DiscardHandler)
		if os.Getenv("ANYLIFT_BENCH_LOG") != "" {
			log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("bench_node", i)
		}
		srv, err := server.Start(context.Background(), server.Config{
			Listen: "127.0.0.1:0", DataDir: dir, Store: schema, Region: apitest.Region, AccountID: accountID,
			Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, AuthTokenTTL: 24 * time.Hour,
			NodeListen: "127.0.0.1:0", NodeSecret: "bench-node-secret-0123456789", FleetOwnership: server.OwnershipOn,
			Log: log,
		})
		if err != nil {
			b.Fatal(err)
		}
		cleanups = append(cleanups, func() { closeServer(srv) })
		e.nodes = append(e.nodes, srv)
		urls = append(urls, srv.URL())
		e.clients = append(e.clients, newClient(srv.URL()))
	}
	for i := range fleetsOwned {
		f := newNamedQueueFleet(b, urls[i%n], len(queueLocations), fmt.Sprintf("owned-%d", i), i == 0)
		f.Nodes = urls
		p := newPool(f, fmt.Sprintf("owned%d-%d", n, i))
		p.byName = true
		e.fleets = append(e.fleets, &queueEnv{fleet: f, pool: p, queue: fmt.Sprintf("owned-%d", i)})
	}
	waitLeasesSettled(b, e.nodes)
	ownedEnvs[n] = e
	return e
}

// waitLeasesSettled waits until every fleet is owned by the node that
// should own it (the nodes hand fleets over a few per second), and every
// node knows it: the owner owns it, and every other node routes its calls
// to the owner. (A node other than the two of a hand-off reads it at its
// next tick.)
func waitLeasesSettled(b *testing.B, nodes []*server.Server) {
	var ids []string
	address := map[string]string{} // node id → forwarding address
	for _, srv := range nodes {
		ids = append(ids, srv.Service().NodeID())
		address[srv.Service().NodeID()] = "http://" + srv.NodeAddr()
	}
	sort.Strings(ids)
	deadline := time.Now().Add(60 * time.Second)
	for {
		settled := true
		err := nodes[0].Store().View(context.Background(), func(tx store.Tx) error {
			leases, err := tx.FleetOwners()
			for _, l := range leases {
				if l.NodeID != owners.Owner(l.FleetID, ids) {
					settled = false
				}
				for _, srv := range nodes {
					base, local := srv.Owners().Route(l.FleetID)
					if mine := srv.Service().NodeID() == l.NodeID; srv.Owners().Owns(l.FleetID) != mine ||
						!mine && (local || base != address[l.NodeID]) {
						settled = false
					}
				}
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if settled {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("fleet leases did not settle in 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func BenchmarkQueuePlacementOwned(b *testing.B) {
	dsn := os.Getenv("ANYLIFT_TEST_POSTGRES")
	if dsn == "" {
		b.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("postgres-nodes-%d", n), func(b *testing.B) {
			e := ownedBenchEnv(b, dsn, n)
			for _, f := range e.fleets {
				f.pool.fill(b, nodesIdle/fleetsOwned+b.N/fleetsOwned+1, 32)
			}
			var mu sync.Mutex
			used := map[*queueEnv][]*gl.Process{}
			var ids []string
			var turn atomic.Int64
			work := readPGWork(b, dsn)
			cpu := readCPUWork(b)
			run(b, func(r *rand.Rand) error {
				k := int(turn.Add(1))
				f := e.fleets[k%len(e.fleets)]
				id := fmt.Sprintf("bench-owned%d-%d", n, placementSeq.Add(1))
				p, err := f.placeOnQueue(e.clients[(k/len(e.fleets))%len(e.clients)], r, id)
				mu.Lock()
				ids = append(ids, id)
				if p != nil {
					used[f] = append(used[f], p)
				}
				mu.Unlock()
				return err
			})
			reportCPUWork(b, cpu, b.N)
			reportPGWork(b, dsn, work, b.N)
			checkFulfilled(b, e.clients[0], ids)
			for f, procs := range used {
				f.pool.retire(procs, 32)
			}
		})
	}
}
