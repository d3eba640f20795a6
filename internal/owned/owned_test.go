package owned_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owned/ownedtest"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/storetest"
	"github.com/anylift/anylift/internal/storetestenv"
)

// The tests here hold the memory of owned fleets to the store on
// PostgreSQL, where commits reach the feed in any order and fleets are
// loaded while they are written: once quiet, the memory of every fleet
// loaded answers what the store answers.

var epoch = ownedtest.Epoch

const self, other = "node-a", "node-b"

var acct = game.Account{Region: "us-west-2", ID: "123456789012"}

// node is a store fencing its writes for node-a, and the memory of the
// fleets node-a owns fed by it. hold, when set, makes the commit hook
// wait, for the changes it returns a channel for, until that channel is
// closed (to deliver commits out of order); held is told when it waits.
type node struct {
	t      *testing.T
	db     *sqldb.DB
	owners *owners.Map
	mem    *owned.Memory
	l      *live.Sessions
	fs     *fleetstate.State

	hookMu sync.Mutex
	hold   func([]store.Change) chan struct{}
	held   chan struct{}
}

func newNode(t *testing.T) *node {
	if storetestenv.PostgresDSN(t) == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	db := storetest.Postgres(t)
	n := &node{t: t, db: db, owners: owners.New(self), l: live.New(), fs: fleetstate.New(), held: make(chan struct{}, 16)}
	db.SetOwners(n.owners)
	n.mem = owned.Follow(db, n.owners, n.l, n.fs, nil)
	db.SetCommitHook(func(changes []store.Change) { // in front of the memory's
		n.hookMu.Lock()
		hold := n.hold
		n.hookMu.Unlock()
		if hold != nil {
			if wait := hold(changes); wait != nil {
				n.held <- struct{}{}
				<-wait
			}
		}
		n.mem.Apply(changes)
	})
	for _, id := range []string{self, other} {
		n.update(func(tx store.Tx) error {
			return tx.BeatNode(&store.Node{ID: id, Address: "http://" + id, Started: time.Now(), OwnsFleets: true})
		})
	}
	n.refresh()
	n.update(func(tx store.Tx) error {
		return tx.InsertLocation(&game.Location{Name: "custom-a", ARN: acct.LocationARN("custom-a")})
	})
	return n
}

func (n *node) update(fn func(store.Tx) error) {
	n.t.Helper()
	if err := n.db.Update(context.Background(), fn); err != nil {
		n.t.Fatal(err)
	}
}

// refresh reads the leases and the nodes into the owners map, as every
// tick of a node does.
func (n *node) refresh() {
	n.t.Helper()
	if err := n.db.View(context.Background(), func(tx store.Tx) error {
		nodes, err := tx.ListNodes(time.Hour)
		if err != nil {
			return err
		}
		leases, err := tx.FleetOwners()
		n.owners.Refresh(leases, nodes, owners.On(nodes))
		return err
	}); err != nil {
		n.t.Fatal(err)
	}
}

// move gives fleet id's lease to node to, and refreshes the map.
func (n *node) move(id, to string) {
	n.t.Helper()
	n.update(func(tx store.Tx) error {
		leases, err := tx.FleetOwners()
		if err != nil {
			return err
		}
		for _, l := range leases {
			if l.FleetID == id && l.NodeID != to {
				_, _, err = tx.MoveFleet(l, to)
			}
		}
		return err
	})
	n.refresh()
}

func (n *node) newFleet(id string) {
	n.t.Helper()
	n.update(func(tx store.Tx) error {
		return tx.InsertFleet(&game.Fleet{ID: id, ARN: acct.FleetARN(id), Status: game.FleetActive, ComputeType: "ANYWHERE",
			CreationTime: epoch, Locations: []string{"custom-a"}})
	})
}

// holdOnce makes the hook wait on the first commit whose changes match,
// and returns the channel that releases it.
func (n *node) holdOnce(match func(store.Change) bool) chan struct{} {
	release := make(chan struct{})
	var once sync.Once
	n.hookMu.Lock()
	n.hold = func(changes []store.Change) chan struct{} {
		for _, c := range changes {
			if match(c) {
				var got chan struct{}
				once.Do(func() { got = release })
				return got
			}
		}
		return nil
	}
	n.hookMu.Unlock()
	return release
}

// renameHeldThenEnd renames session s in a transaction whose changes the
// hook holds back, then ends s; it returns what releases the rename's
// changes to the memory, and the rename's result.
func (n *node) renameHeldThenEnd(s *game.GameSession, name string) (release chan struct{}, renamed chan error) {
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionPut && c.Session.Name == name })
	renamed = n.async(func(tx store.Tx) error {
		c := *s
		c.Name = name
		return tx.UpdateGameSession(&c)
	})
	n.waitHeld()
	n.update(func(tx store.Tx) error {
		c := *s
		c.Status, c.TerminationTime = game.SessionTerminated, epoch.Add(time.Minute)
		return tx.UpdateGameSession(&c)
	})
	return release, renamed
}

// waitHeld waits until the hook holds a commit back.
func (n *node) waitHeld() {
	n.t.Helper()
	select {
	case <-n.held:
	case <-time.After(20 * time.Second):
		n.t.Fatal("no commit held back")
	}
}

// never is a reservation cutoff no reservation reaches.
var never = epoch.Add(-time.Hour)

// async runs a write transaction on its own goroutine; its error comes
// on the channel once its caller would hear it.
func (n *node) async(fn func(store.Tx) error) chan error {
	done := make(chan error, 1)
	go func() { done <- n.db.Update(context.Background(), fn) }()
	return done
}

// Two commits of one row reaching the feed in the opposite order of their
// commits: the memory keeps the newer, whether the older would bring an
// ended session or process back, set an older seat count, or come before
// the session it changes.
func TestOutOfOrderCommitsKeepTheNewest(t *testing.T) {
	n := newNode(t)
	const fleet = "fleet-00000000-0000-0000-0000-000000000001"
	n.newFleet(fleet)
	ownedtest.WaitLoaded(n.t, n.mem, fleet)

	// An older put of a session reaching the feed after the session ended.
	s := ownedtest.Session(fleet, "custom-a", "gs-ended", game.SessionActive, 4)
	n.update(func(tx store.Tx) error { return tx.InsertGameSession(s) })
	release, older := n.renameHeldThenEnd(s, "late")
	close(release)
	if err := <-older; err != nil {
		t.Fatal(err)
	}
	if n.l.HasSession(s.ID) {
		t.Error("an older write of a session that ended brought it back")
	}

	// A seat count reaching the feed before the session it changes.
	s2 := ownedtest.Session(fleet, "custom-a", "gs-seats", game.SessionActive, 4)
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionPut && c.ID == s2.ID })
	inserted := n.async(func(tx store.Tx) error { return tx.InsertGameSession(s2) })
	n.waitHeld()
	n.update(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, ownedtest.Players(2), never) })
	close(release)
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	if got := n.seats(s2.ID); got != 2 {
		t.Errorf("a session whose seat count came first holds %d seats, want 2", got)
	}

	// An older seat count reaching the feed after a newer one.
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionSeats && c.ID == s2.ID && c.Seats == 3 })
	first := n.async(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, ownedtest.Players(1), never) })
	n.waitHeld()
	n.update(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, ownedtest.Players(1), never) })
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := n.seats(s2.ID); got != 4 {
		t.Errorf("after an older seat count came last the session holds %d seats, want 4", got)
	}

	// An older put of a process reaching the feed after it ended.
	p := ownedtest.Process(fleet, "custom-a", "pid-1", game.ProcessActive)
	n.update(func(tx store.Tx) error { return tx.PutProcess(p) })
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.ProcessPut && c.Process.Port == 9999 })
	older = n.async(func(tx store.Tx) error {
		c := *p
		c.Port = 9999
		return tx.PutProcess(&c)
	})
	n.waitHeld()
	n.update(func(tx store.Tx) error {
		c := *p
		c.Status, c.TerminationTime = game.ProcessTerminated, epoch.Add(time.Minute)
		return tx.PutProcess(&c)
	})
	close(release)
	if err := <-older; err != nil {
		t.Fatal(err)
	}
	if n.fs.HasProcess(store.ProcessKey{FleetID: fleet, ComputeName: "c1", PID: "pid-1"}) {
		t.Error("an older write of a process that ended brought it back")
	}
	ownedtest.Check(n.t, n.db, n.mem, fleet)
}

// seats returns the seat count of a live session in memory (-1: none).
func (n *node) seats(id string) int {
	list, _, ok, err := n.l.List(store.SessionFilter{ID: id}, store.Page{})
	if !ok || err != nil || len(list) != 1 {
		return -1
	}
	return list[0].CurrentPlayerSessionCount
}

// A change committed before the snapshot a load reads, reaching the feed
// after it (while the fleet loads), must not bring back a session the
// snapshot has ended.
func TestLoadIgnoresChangesOlderThanItsSnapshot(t *testing.T) {
	n := newNode(t)
	const fleet = "fleet-00000000-0000-0000-0000-000000000002"
	n.newFleet(fleet)
	ownedtest.WaitLoaded(n.t, n.mem, fleet)
	s := ownedtest.Session(fleet, "custom-a", "gs-1", game.SessionActive, 4)
	n.update(func(tx store.Tx) error { return tx.InsertGameSession(s) })

	// The node loses the fleet (its memory drops it) but still writes it:
	// the store still names it the owner.
	n.mem.Lose(fleet)
	for deadline := time.Now().Add(10 * time.Second); n.l.HasSession(s.ID); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lost fleet was never dropped")
		}
	}
	release, older := n.renameHeldThenEnd(s, "older")
	// The older change reaches the feed once the load has read its
	// snapshot, which holds the session ended.
	var once sync.Once
	owned.AfterSnapshot(n.mem, func() { once.Do(func() { close(release) }) })
	n.mem.Gain(fleet, 2)
	ownedtest.WaitLoaded(n.t, n.mem, fleet)
	if err := <-older; err != nil {
		t.Fatal(err)
	}
	if n.l.HasSession(s.ID) {
		t.Error("a change older than the load's snapshot brought back a session that ended")
	}
	ownedtest.Check(n.t, n.db, n.mem, fleet)
}

// Writers change sessions and processes of a few fleets from several
// goroutines while the fleets' leases move to another node and back (each
// move back a load while the fleet is written); at each quiet moment,
// every fleet loaded answers from memory what the store answers.
func TestOwnedMemoryAgreesWhileFleetsMove(t *testing.T) {
	n := newNode(t)
	var fleets []string
	for i := range 3 {
		id := fmt.Sprintf("fleet-00000000-0000-0000-0000-00000000010%d", i)
		n.newFleet(id)
		fleets = append(fleets, id)
	}
	ownedtest.WaitLoaded(n.t, n.mem, fleets...)
	var seq sync.Mutex
	next := 0
	newID := func() int {
		seq.Lock()
		defer seq.Unlock()
		next++
		return next
	}
	for round := range 8 {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for range 30 {
					n.step(r, fleets[r.IntN(len(fleets))], newID)
				}
			}()
		}
		// Meanwhile a fleet goes to the other node and comes back.
		r := rand.New(rand.NewPCG(uint64(round), 99))
		moved := fleets[r.IntN(len(fleets))]
		n.move(moved, other)
		if n.mem.Loaded(moved) {
			t.Fatalf("round %d: fleet %s, owned by another node, still answered from memory", round, moved)
		}
		n.move(moved, self)
		wg.Wait()
		if t.Failed() {
			return
		}
		ownedtest.WaitLoaded(n.t, n.mem, fleets...)
		for _, id := range fleets {
			ownedtest.Check(n.t, n.db, n.mem, id)
		}
	}
}

// step makes one random write transaction on fleet; a write refused
// because the fleet is moving (NotOwner) is not an error.
func (n *node) step(r *rand.Rand, fleet string, newID func() int) {
	err := n.db.Update(context.Background(), func(tx store.Tx) error { return ownedtest.Write(tx, r, fleet, "custom-a", newID) })
	var no *store.NotOwner
	if err != nil && !errors.As(err, &no) {
		n.t.Error(err)
	}
}
