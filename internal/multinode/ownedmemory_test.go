package multinode

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/owned/ownedtest"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// Nodes on one schema with fleet ownership each hold in memory the fleets
// they own. Sessions and processes are written on whichever node owns
// each fleet while a third node joins and one stops, moving fleets
// between them (each move a load of the fleet on its new owner while it
// is written). Once the writers stop (the nodes' timers go on), each
// fleet is answered from its owner's memory, what the memory answers is
// the store's, and no node answers from memory a fleet it does not own.
func TestOwnedFleetsInMemoryAsTheyMove(t *testing.T) {
	dsn := schema(t)
	const secret = "owned-memory-test-secret"
	a := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	b := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	ctx := context.Background()
	fleets := newFleets(t, a, 6)
	waitSettled(t, "two nodes", a, a, b)

	// Writers write each fleet on the node that owns it: a node that does
	// not refuses (NotOwner), and the next is tried.
	var mu sync.Mutex
	up := []*apitest.Env{a, b}
	nodes := func() []*apitest.Env {
		mu.Lock()
		defer mu.Unlock()
		return append([]*apitest.Env(nil), up...)
	}
	var seq, written atomic.Int64
	newID := func() int { return int(seq.Add(1)) }
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 5))
			for {
				select {
				case <-stop:
					return
				default:
				}
				fleet := fleets[r.IntN(len(fleets))]
				for _, n := range nodes() {
					err := n.Server.Store().Update(ctx, func(tx store.Tx) error { return ownedtest.Write(tx, r, fleet, location, newID) })
					var no *store.NotOwner
					if errors.As(err, &no) {
						continue
					}
					if err != nil && isUp(nodes(), n) {
						t.Error(err)
					} else if err == nil {
						written.Add(1)
					}
					break
				}
			}
		}()
	}
	waitWritten := func(n int64) {
		t.Helper()
		target := written.Load() + n
		for deadline := time.Now().Add(30 * time.Second); written.Load() < target; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("writes stalled at %d", written.Load())
			}
		}
	}
	waitWritten(50)

	c := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	mu.Lock()
	up = append(up, c)
	mu.Unlock()
	waitSettled(t, "a third node joins", a, a, b, c)
	waitWritten(50)

	mu.Lock()
	up = []*apitest.Env{a, c}
	mu.Unlock()
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Server.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, "a node stops", a, a, c)
	waitWritten(50)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}

	owner := map[string]*apitest.Env{}
	for id, l := range leases(t, a) {
		for _, n := range []*apitest.Env{a, c} {
			if n.Server.Service().NodeID() == l.NodeID {
				owner[id] = n
			}
		}
	}
	for _, id := range fleets {
		n := owner[id]
		if n == nil {
			t.Fatalf("fleet %s has no owner among the nodes up", id)
		}
		mem := n.Server.OwnedMemory()
		ownedtest.WaitLoaded(t, mem, id)
		ownedtest.CheckQuiet(t, n.Server.Store().(*sqldb.DB), mem, id)
		for _, other := range []*apitest.Env{a, c} {
			if other != n && other.Server.OwnedMemory().Loaded(id) {
				t.Errorf("fleet %s answered from the memory of a node that does not own it", id)
			}
		}
	}
	t.Logf("%d writes", written.Load())
}

// isUp reports whether n is among nodes.
func isUp(nodes []*apitest.Env, n *apitest.Env) bool {
	for _, m := range nodes {
		if m == n {
			return true
		}
	}
	return false
}
