package owned

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/storetestenv"
)

// The tests here hold the memory of owned fleets to the store on
// PostgreSQL, where commits reach the feed in any order and fleets are
// loaded while they are written: once quiet, the memory of every fleet
// loaded answers what the store answers.

var epoch = time.UnixMilli(1767225600000).UTC()

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
	mem    *Memory
	l      *live.Sessions
	fs     *fleetstate.State

	hookMu sync.Mutex
	hold   func([]store.Change) chan struct{}
	held   chan struct{}
}

func newNode(t *testing.T) *node {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	db, err := postgres.Open(ctx, storetestenv.FreshSchema(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, db: db, owners: owners.New(self), l: live.New(), fs: fleetstate.New(), held: make(chan struct{}, 16)}
	db.SetOwners(n.owners)
	n.mem = Follow(db, n.owners, n.l, n.fs, nil)
	t.Cleanup(func() { db.Close() })
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

// waitLoaded waits until every fleet of ids is answered from memory.
func (n *node) waitLoaded(ids ...string) {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for !n.mem.Loaded(id) {
			if time.Now().After(deadline) {
				n.t.Fatalf("fleet %s never loaded", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
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

func session(fleetID, idString, status string, max int) *game.GameSession {
	return &game.GameSession{ID: acct.GameSessionARN(fleetID, "custom-a", idString), IDString: idString, Name: idString,
		FleetID: fleetID, FleetARN: acct.FleetARN(fleetID), Location: "custom-a", ComputeName: "c1", CreationTime: epoch,
		MaximumPlayerSessionCount: max, Status: status, PlayerSessionCreationPolicy: game.AcceptAll,
		ProtectionPolicy: game.NoProtection, IPAddress: "10.0.0.1", Port: 7000}
}

func players(n int) []*game.PlayerSession {
	var out []*game.PlayerSession
	for range n {
		out = append(out, &game.PlayerSession{ID: game.NewPlayerSessionID(), PlayerID: "p", CreationTime: epoch, Status: game.PlayerReserved})
	}
	return out
}

func process(fleetID, pid, status string) *game.Process {
	return &game.Process{FleetID: fleetID, ComputeName: "c1", PID: pid, Location: "custom-a", Status: status,
		Healthy: true, Connected: true, CreationTime: epoch}
}

// Two commits of one row reaching the feed in the opposite order of their
// commits: the memory keeps the newer, whether the older would bring an
// ended session or process back, set an older seat count, or come before
// the session it changes.
func TestOutOfOrderCommitsKeepTheNewest(t *testing.T) {
	n := newNode(t)
	const fleet = "fleet-00000000-0000-0000-0000-000000000001"
	n.newFleet(fleet)
	n.waitLoaded(fleet)

	// An older put of a session reaching the feed after the session ended.
	s := session(fleet, "gs-ended", game.SessionActive, 4)
	n.update(func(tx store.Tx) error { return tx.InsertGameSession(s) })
	release := n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionPut && c.Session.Name == "late" })
	older := n.async(func(tx store.Tx) error {
		c := *s
		c.Name = "late"
		return tx.UpdateGameSession(&c)
	})
	n.waitHeld()
	n.update(func(tx store.Tx) error {
		c := *s
		c.Status, c.TerminationTime = game.SessionTerminated, epoch.Add(time.Minute)
		return tx.UpdateGameSession(&c)
	})
	close(release)
	if err := <-older; err != nil {
		t.Fatal(err)
	}
	if n.l.Holds(s.ID) {
		t.Error("an older write of a session that ended brought it back")
	}

	// A seat count reaching the feed before the session it changes.
	s2 := session(fleet, "gs-seats", game.SessionActive, 4)
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionPut && c.ID == s2.ID })
	inserted := n.async(func(tx store.Tx) error { return tx.InsertGameSession(s2) })
	n.waitHeld()
	n.update(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, players(2), never) })
	close(release)
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	if got := n.seats(s2.ID); got != 2 {
		t.Errorf("a session whose seat count came first holds %d seats, want 2", got)
	}

	// An older seat count reaching the feed after a newer one.
	release = n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionSeats && c.ID == s2.ID && c.Seats == 3 })
	first := n.async(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, players(1), never) })
	n.waitHeld()
	n.update(func(tx store.Tx) error { return tx.ReserveSeats(s2.ID, players(1), never) })
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := n.seats(s2.ID); got != 4 {
		t.Errorf("after an older seat count came last the session holds %d seats, want 4", got)
	}

	// An older put of a process reaching the feed after it ended.
	p := process(fleet, "pid-1", game.ProcessActive)
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
	if n.fs.Holds(store.ProcessKey{FleetID: fleet, ComputeName: "c1", PID: "pid-1"}) {
		t.Error("an older write of a process that ended brought it back")
	}
	n.check(fleet)
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
	n.waitLoaded(fleet)
	s := session(fleet, "gs-1", game.SessionActive, 4)
	n.update(func(tx store.Tx) error { return tx.InsertGameSession(s) })

	// The node loses the fleet (its memory drops it) but still writes it:
	// the store still names it the owner.
	n.mem.Lose(fleet)
	for deadline := time.Now().Add(10 * time.Second); n.l.Holds(s.ID); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lost fleet was never dropped")
		}
	}
	release := n.holdOnce(func(c store.Change) bool { return c.Kind == store.SessionPut && c.Session.Name == "older" })
	older := n.async(func(tx store.Tx) error {
		c := *s
		c.Name = "older"
		return tx.UpdateGameSession(&c)
	})
	n.waitHeld()
	n.update(func(tx store.Tx) error {
		c := *s
		c.Status, c.TerminationTime = game.SessionTerminated, epoch.Add(time.Minute)
		return tx.UpdateGameSession(&c)
	})
	// The older change reaches the feed once the load has read its
	// snapshot, which holds the session ended.
	var once sync.Once
	n.mem.afterSnapshot = func() { once.Do(func() { close(release) }) }
	n.mem.Gain(fleet, 2)
	n.waitLoaded(fleet)
	if err := <-older; err != nil {
		t.Fatal(err)
	}
	if n.l.Holds(s.ID) {
		t.Error("a change older than the load's snapshot brought back a session that ended")
	}
	n.check(fleet)
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
	n.waitLoaded(fleets...)
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
		n.waitLoaded(fleets...)
		for _, id := range fleets {
			n.check(id)
		}
	}
}

// step makes one random write transaction on fleet; a write refused
// because the fleet is moving (NotOwner) is not an error.
func (n *node) step(r *rand.Rand, fleet string, newID func() int) {
	err := n.db.Update(context.Background(), func(tx store.Tx) error {
		live, err := tx.LiveGameSessions(fleet, "")
		if err != nil {
			return err
		}
		procs, _, err := tx.ListProcesses(fleet, "", store.Page{Limit: 1000})
		if err != nil {
			return err
		}
		switch k := r.IntN(8); {
		case k < 2 || len(live) == 0:
			status := []string{game.SessionActive, game.SessionActive, game.SessionActivating}[r.IntN(3)]
			s := session(fleet, fmt.Sprintf("gs-%05d", newID()), status, 1+r.IntN(4))
			s.CreationTime = epoch.Add(time.Duration(r.IntN(50)) * time.Millisecond)
			s.Properties = []game.Property{{Key: "mode", Value: []string{"ffa", "ctf"}[r.IntN(2)]}}
			return tx.InsertGameSession(s)
		case k < 4:
			err := tx.ReserveSeats(live[r.IntN(len(live))].ID, players(1), epoch)
			if game.IsKind(err, game.GameSessionFull) || game.IsKind(err, game.InvalidGameSessionStatus) {
				return nil
			}
			return err
		case k == 4:
			s := live[r.IntN(len(live))]
			s.Name = fmt.Sprintf("renamed-%d", r.IntN(100))
			if s.Status == game.SessionActivating {
				s.Status = game.SessionActive
			}
			return tx.UpdateGameSession(s)
		case k == 5:
			s := live[r.IntN(len(live))]
			if err := tx.EndPlayerSessions(s.ID, epoch.Add(time.Minute)); err != nil {
				return err
			}
			s.Status, s.TerminationTime, s.CurrentPlayerSessionCount = game.SessionTerminated, epoch.Add(time.Minute), 0
			return tx.UpdateGameSession(s)
		case k == 6 || len(procs) == 0:
			return tx.PutProcess(process(fleet, fmt.Sprintf("pid-%05d", newID()), game.ProcessActive))
		default:
			p := procs[r.IntN(len(procs))]
			switch r.IntN(3) {
			case 0:
				p.Status, p.TerminationTime = game.ProcessTerminated, epoch.Add(time.Minute)
			case 1:
				p.Healthy = !p.Healthy
			default:
				_, err := tx.ClaimFreeProcess(fleet, "custom-a", live[r.IntN(len(live))].ID, 0)
				if game.IsKind(err, game.NotFound) {
					return nil
				}
				return err
			}
			return tx.PutProcess(p)
		}
	})
	var no *store.NotOwner
	if err != nil && !errors.As(err, &no) {
		n.t.Error(err)
	}
}

// check fails unless the memory, which must answer for fleet, answers
// what the store does: every describe of the fleet and of each session,
// searches, the live counts of the fleet metrics, the free processes and
// the record of each process.
func (n *node) check(fleet string) {
	n.t.Helper()
	var stored []*game.GameSession
	var procs []*game.Process
	counts := map[[2]string][3]int64{}
	err := n.db.View(context.Background(), func(tx store.Tx) error {
		var err error
		if stored, _, err = tx.ListGameSessions(store.SessionFilter{FleetID: fleet}, store.Page{Limit: 1000}); err != nil {
			return err
		}
		procs, _, err = tx.ListProcesses(fleet, "", store.Page{Limit: 1000})
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	for _, status := range []string{game.SessionActive, game.SessionActivating} {
		n.sameList(store.SessionFilter{FleetID: fleet, Status: status}, 3)
	}
	for _, s := range stored {
		if !s.Live() {
			continue
		}
		n.sameList(store.SessionFilter{ID: s.ID}, 0)
		k := [2]string{s.Location, s.ComputeName}
		c := counts[k]
		switch s.Status {
		case game.SessionActivating:
			c[0]++
		case game.SessionActive:
			c[1]++
		}
		c[2] += int64(s.CurrentPlayerSessionCount)
		counts[k] = c
	}
	got := map[[2]string][3]int64{}
	if !n.l.CountLive(fleet, func(loc, compute string, activating, active, players int64) {
		got[[2]string{loc, compute}] = [3]int64{activating, active, players}
	}) {
		n.t.Fatalf("fleet %s: the memory does not count its live sessions", fleet)
	}
	if !reflect.DeepEqual(got, counts) {
		n.t.Fatalf("fleet %s: live counts from memory %v, from the store %v", fleet, got, counts)
	}
	for _, q := range []store.SearchQuery{{FleetID: fleet}, {FleetID: fleet, Location: "custom-a"}} {
		n.sameSearch(q, 2)
	}
	var free []string
	slices.SortFunc(procs, func(a, b *game.Process) int { // the claim order
		return cmp.Or(cmp.Compare(store.Millis(a.CreationTime), store.Millis(b.CreationTime)),
			cmp.Compare(a.PID, b.PID), cmp.Compare(a.ComputeName, b.ComputeName))
	})
	for _, p := range procs {
		if p.Free() {
			free = append(free, p.ComputeName+"/"+p.PID)
		}
		got, ok := n.fs.Get(fleet, p.ComputeName, p.PID)
		if p.Status == game.ProcessTerminated {
			if ok {
				n.t.Fatalf("fleet %s: process %s ended, memory holds it", fleet, p.PID)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, p) {
			n.t.Fatalf("fleet %s: process %s from memory %+v (%v), from the store %+v", fleet, p.PID, got, ok, p)
		}
	}
	if got := n.fs.Free(fleet, "custom-a"); !slices.Equal(got, free) {
		n.t.Fatalf("fleet %s: free processes in memory %v, in the store %v", fleet, got, free)
	}
	activating := map[string]int{}
	for _, s := range stored {
		if s.Status == game.SessionActivating {
			activating[s.ComputeName]++
		}
	}
	for _, compute := range []string{"c1"} {
		if got := n.fs.Activating(fleet, compute); got != activating[compute] {
			n.t.Fatalf("fleet %s: %d sessions ACTIVATING on %s in memory, %d in the store", fleet, got, compute, activating[compute])
		}
	}
}

// sameList pages through a describe in memory and in the store.
func (n *node) sameList(f store.SessionFilter, limit int) {
	n.t.Helper()
	p := store.Page{Limit: limit}
	for page := 0; page < 200; page++ {
		ml, mn, ok, merr := n.l.List(f, p)
		if !ok {
			n.t.Fatalf("describe %+v: not answered from memory", f)
		}
		var sl []*game.GameSession
		var sn string
		serr := n.db.View(context.Background(), func(tx store.Tx) error {
			var err error
			sl, sn, err = tx.ListGameSessions(f, p)
			return err
		})
		if f.ID != "" && len(sl) == 0 && serr == nil {
			serr = game.Errorf(game.NotFound, "game session %s not found", f.ID)
			if len(ml) == 0 {
				merr = serr
			}
		}
		same(n.t, fmt.Sprintf("describe %+v page %d", f, page), ml, sl, mn, sn, merr, serr)
		if mn == "" {
			return
		}
		p.Token = mn
	}
}

// sameSearch pages through a search in memory and in the store.
func (n *node) sameSearch(q store.SearchQuery, limit int) {
	n.t.Helper()
	p := store.Page{Limit: limit}
	for page := 0; page < 200; page++ {
		ml, mn, ok, merr := n.l.Search(q, p)
		if !ok {
			n.t.Fatalf("search %+v: not answered from memory", q)
		}
		var sl []*game.GameSession
		var sn string
		serr := n.db.View(context.Background(), func(tx store.Tx) error {
			var err error
			sl, sn, err = tx.SearchGameSessions(q, p)
			return err
		})
		same(n.t, fmt.Sprintf("search %+v page %d", q, page), ml, sl, mn, sn, merr, serr)
		if mn == "" {
			return
		}
		p.Token = mn
	}
}

func same(t *testing.T, what string, got, want []*game.GameSession, gotNext, wantNext string, gotErr, wantErr error) {
	t.Helper()
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotNext != wantNext || len(got) != len(want) {
		t.Fatalf("%s: memory %d sessions, token %q, error %v; store %d, %q, %v", what, len(got), gotNext, gotErr, len(want), wantNext, wantErr)
	}
	for i := range got {
		g, w := norm(got[i]), norm(want[i])
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: session %d differs:\nmemory %+v\nstore  %+v", what, i, g, w)
		}
	}
}

// norm is s as the wire sees it: times in milliseconds.
func norm(s *game.GameSession) game.GameSession {
	c := *s
	c.CreationTime = store.FromMillis(store.Millis(c.CreationTime))
	c.TerminationTime = store.FromMillis(store.Millis(c.TerminationTime))
	if len(c.Properties) == 0 {
		c.Properties = nil
	}
	return c
}
