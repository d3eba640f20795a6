package fleetstate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// The tests here hold the memory of free processes to the store: every
// claim takes the process the store's own query would take, no process
// is claimed twice, a claim that does not commit leaves the process free,
// and after any writes the memory holds what a start-up would rebuild.

var epoch = time.UnixMilli(1767225600000).UTC()

var errOnPurpose = errors.New("failed on purpose")

// world is a SQLite store that claims from a memory it feeds.
type world struct {
	t       *testing.T
	dir     string
	db      *sqldb.DB
	mem     *fleetstate.State
	mu      sync.Mutex
	claimed map[string]string // process → game session
	seq     int
}

const (
	testFleet = "fleet-1"
	capped    = 2 // MaxConcurrentGameSessionActivations of half the claims
)

var locations = []string{"custom-a", "custom-b"}

func open(t *testing.T, dir string) (*sqldb.DB, *fleetstate.State) {
	db, err := sqlite.Open(context.Background(), dir, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	mem := fleetstate.New()
	load := func(visit func(store.Change) error) error {
		if err := db.LoadProcesses(context.Background(), visit); err != nil {
			return err
		}
		return db.LoadLive(context.Background(), visit)
	}
	if err := mem.Load(load); err != nil {
		t.Fatal(err)
	}
	db.SetCommitHook(mem.Apply)
	db.SetLiveProcesses(mem)
	return db, mem
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, dir: t.TempDir(), claimed: map[string]string{}}
	w.db, w.mem = open(t, w.dir)
	t.Cleanup(func() { w.db.Close() })
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		return tx.InsertFleet(&game.Fleet{ID: testFleet, Status: game.FleetActive, CreationTime: epoch, Locations: locations})
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// randomProcess is one of 60 processes on 4 computes, in a random state;
// creation times collide often, so the order's tie-breakers matter.
func randomProcess(r *rand.Rand) *game.Process {
	n := r.IntN(60)
	p := &game.Process{FleetID: testFleet, ComputeName: fmt.Sprintf("host-%d", n%4), PID: fmt.Sprintf("p%02d", n/4),
		Location: locations[n%4/2], Status: game.ProcessActive, Healthy: r.IntN(5) > 0, Connected: r.IntN(6) > 0,
		AwaitingHeartbeat: r.IntN(2) == 0, CreationTime: epoch.Add(time.Duration(n%7) * time.Millisecond), Port: 7000 + n}
	switch r.IntN(8) {
	case 0:
		p.Status = game.ProcessConnected
	case 1:
		p.Status = game.ProcessTerminated
	}
	return p
}

// step is one random write transaction: put a process, claim one (with
// its ACTIVATING session), activate a session; some fail after writing.
func (w *world) step(r *rand.Rand, exact bool) {
	w.mu.Lock()
	w.seq++
	gsID := fmt.Sprintf("gs-%d", w.seq)
	w.mu.Unlock()
	fail := r.IntN(5) == 0
	op := r.IntN(3)
	loc := locations[r.IntN(2)]
	maxAct := 0
	if r.IntN(2) == 0 {
		maxAct = capped
	}
	put := randomProcess(r)
	var got *game.Process
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		got = nil
		switch op {
		case 0:
			if old, err := tx.GetProcess(put.FleetID, put.ComputeName, put.PID); err == nil && old.GameSessionID != "" {
				return nil // a process that hosted a session keeps it
			}
			if err := tx.PutProcess(put); err != nil {
				return err
			}
		case 1:
			want := sqlChoice(w.t, tx, loc, maxAct)
			p, err := tx.ClaimFreeProcess(testFleet, loc, gsID, maxAct)
			if game.IsKind(err, game.NotFound) {
				if exact && want != "" {
					w.t.Errorf("memory found no free process in %s, the store's query %s", loc, want)
				}
				return nil
			}
			if err != nil {
				return err
			}
			if exact && p.ComputeName+"/"+p.PID != want {
				w.t.Errorf("memory claimed %s/%s in %s (cap %d), the store's query %q", p.ComputeName, p.PID, loc, maxAct, want)
			}
			// The memory's record is the store's (it may not be behind the
			// batch's earlier writes), the claim aside.
			if cur, err := tx.GetProcess(p.FleetID, p.ComputeName, p.PID); err != nil || !reflect.DeepEqual(cur, p) {
				w.t.Errorf("claimed %+v\n the store has %+v (%v)", p, cur, err)
			}
			got = p
			gs := &game.GameSession{ID: gsID, IDString: gsID, FleetID: testFleet, Location: loc, ComputeName: p.ComputeName,
				ProcessID: p.PID, Status: game.SessionActivating, CreationTime: epoch, PlayerSessionCreationPolicy: game.AcceptAll}
			if err := tx.InsertGameSession(gs); err != nil {
				return err
			}
		case 2:
			w.mu.Lock()
			var ids []string
			for _, id := range w.claimed {
				ids = append(ids, id)
			}
			w.mu.Unlock()
			if len(ids) == 0 {
				return nil
			}
			slices.Sort(ids)
			gs, err := tx.GetGameSession(ids[r.IntN(len(ids))])
			if err != nil || gs.Status != game.SessionActivating {
				return err
			}
			gs.Status = game.SessionActive
			if err := tx.UpdateGameSession(gs); err != nil {
				return err
			}
		}
		if fail {
			return errOnPurpose
		}
		return nil
	})
	if err != nil && !errors.Is(err, errOnPurpose) {
		w.t.Fatal(err)
	}
	if err == nil && got != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		k := got.ComputeName + "/" + got.PID
		if other, ok := w.claimed[k]; ok {
			w.t.Errorf("process %s claimed for %s and %s", k, other, gsID)
		}
		w.claimed[k] = gsID
	}
}

// sqlChoice is the process the store's query picks (sqldb's own
// ClaimFreeProcess, without the memory), as "compute/pid", or "".
func sqlChoice(t *testing.T, tx store.Tx, location string, maxActivating int) string {
	var all []*game.Process
	for next := ""; ; {
		list, n, err := tx.ListProcesses(testFleet, game.ProcessActive, store.Page{Limit: 1000, Token: next})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, list...)
		if next = n; next == "" {
			break
		}
	}
	activating := map[string]int{}
	sessions, _, err := tx.ListGameSessions(store.SessionFilter{FleetID: testFleet, Status: game.SessionActivating}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, gs := range sessions {
		activating[gs.ComputeName]++
	}
	best := ""
	var bestP *game.Process
	for _, p := range all {
		if !p.Free() || p.Location != location || (maxActivating > 0 && activating[p.ComputeName] >= maxActivating) {
			continue
		}
		if bestP == nil || before(p, bestP) {
			bestP, best = p, p.ComputeName+"/"+p.PID
		}
	}
	return best
}

func before(a, b *game.Process) bool {
	ka, kb := store.Millis(a.CreationTime), store.Millis(b.CreationTime)
	if ka != kb {
		return ka < kb
	}
	if a.PID != b.PID {
		return a.PID < b.PID
	}
	return a.ComputeName < b.ComputeName
}

// check compares the memory with what a start-up rebuilds from the store
// and with the store's free processes.
func (w *world) check() {
	w.t.Helper()
	w.db.Close()
	db, rebuilt := open(w.t, w.dir)
	w.db = db
	for _, loc := range locations {
		if got, want := w.mem.Free(testFleet, loc), rebuilt.Free(testFleet, loc); !reflect.DeepEqual(got, want) {
			w.t.Errorf("free in %s:\n memory  %v\n rebuilt %v", loc, got, want)
		}
		for c := range 4 {
			compute := fmt.Sprintf("host-%d", c)
			if got, want := w.mem.Activating(testFleet, compute), rebuilt.Activating(testFleet, compute); got != want {
				w.t.Errorf("ACTIVATING on %s: memory %d, rebuilt %d", compute, got, want)
			}
		}
	}
	for n := range 60 {
		p := randomProcess(rand.New(rand.NewPCG(0, 0)))
		p.ComputeName, p.PID = fmt.Sprintf("host-%d", n%4), fmt.Sprintf("p%02d", n/4)
		got, gotOK := w.mem.Get(testFleet, p.ComputeName, p.PID)
		want, wantOK := rebuilt.Get(testFleet, p.ComputeName, p.PID)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			w.t.Errorf("process %s/%s:\n memory  %+v\n rebuilt %+v", p.ComputeName, p.PID, got, want)
		}
	}
	for k, gs := range w.claimed {
		compute, pid, _ := strings.Cut(k, "/")
		if !w.mem.Hosts(testFleet, compute, pid, gs) || !rebuilt.Hosts(testFleet, compute, pid, gs) {
			w.t.Errorf("process %s hosts %s: memory %v, rebuilt %v", k, gs, w.mem.Hosts(testFleet, compute, pid, gs), rebuilt.Hosts(testFleet, compute, pid, gs))
		}
		if w.mem.Hosts(testFleet, compute, pid, gs+"-other") {
			w.t.Errorf("process %s hosts another session too", k)
		}
	}
	w.mem = rebuilt
}

// TestClaimsAgreeWithTheStore: one write at a time, each claim takes
// exactly the process the store's query names.
func TestClaimsAgreeWithTheStore(t *testing.T) {
	w := newWorld(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		w.step(r, true)
	}
	w.check()
	for range 100 {
		w.step(r, true)
	}
	w.check()
	if len(w.claimed) < 20 {
		t.Errorf("only %d claims: the test does not test much", len(w.claimed))
	}
}

// TestConcurrentWritesKeepTheMemory: writes from 8 goroutines, so group
// commit runs several per batch (some failing), never claim a process
// twice, and leave the memory as a start-up rebuilds it.
func TestConcurrentWritesKeepTheMemory(t *testing.T) {
	w := newWorld(t)
	for round := range 3 {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for range 60 {
					w.step(r, false)
				}
			})
		}
		wg.Wait()
		w.check()
	}
	if len(w.claimed) < 20 {
		t.Errorf("only %d claims: the test does not test much", len(w.claimed))
	}
}
