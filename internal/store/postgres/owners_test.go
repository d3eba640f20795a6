package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/storetestenv"
)

// Two nodes' stores on one schema, each fencing its writes with its own
// view of the leases. A node whose lease was moved while it still
// believes it holds the fleet (paused, say) writes nothing: every write
// for the fleet is refused with NotOwner naming the new owner, and a
// write in flight when the lease moves commits before the move. So with
// each write its own transaction and with writes grouped, where the
// fence's read of the lease rides in the pipeline ahead of the writes it
// guards.
func TestFencedFleetWrites(t *testing.T) {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprintf("grouped=%v", grouped), func(t *testing.T) { testFencedFleetWrites(t, dsn, grouped) })
	}
}

func testFencedFleetWrites(t *testing.T, dsn string, grouped bool) {
	ctx := context.Background()
	schema := storetestenv.FreshSchema(t, dsn)
	open := func(id, addr string) (*sqldb.DB, *owners.Map) {
		db, err := Open(ctx, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if grouped {
			db.EnableGroupCommit()
		}
		m := owners.New(id)
		db.SetOwners(m)
		if err := db.Update(ctx, func(tx store.Tx) error {
			return tx.BeatNode(&store.Node{ID: id, Address: addr, Started: time.Now(), OwnsFleets: true})
		}); err != nil {
			t.Fatal(err)
		}
		return db, m
	}
	a, am := open("node-a", "http://127.0.0.1:1")
	b, bm := open("node-b", "http://127.0.0.1:2")
	refresh := func(db *sqldb.DB, m *owners.Map) {
		t.Helper()
		if err := db.View(ctx, func(tx store.Tx) error {
			nodes, err := tx.ListNodes(time.Minute)
			if err != nil {
				return err
			}
			leases, err := tx.FleetOwners()
			m.Refresh(leases, nodes, owners.On(nodes))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	refresh(a, am)
	refresh(b, bm)

	acct := game.Account{Region: "us-west-2", ID: "123456789012"}
	const fleet, loc = "fleet-0a0a0a0a-1111-2222-3333-444444444444", "custom-fence"
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := a.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertLocation(&game.Location{Name: loc, ARN: acct.LocationARN(loc)}); err != nil {
			return err
		}
		return tx.InsertFleet(&game.Fleet{ID: fleet, ARN: acct.FleetARN(fleet), Status: game.FleetActive, ComputeType: "ANYWHERE",
			Locations: []string{loc}, CreationTime: now})
	}); err != nil {
		t.Fatal(err)
	}
	if e, ok := am.Held(fleet); !ok || e != 1 {
		t.Fatalf("the node creating a fleet holds it: epoch %d, %v", e, ok)
	}
	session := func(id string) *game.GameSession {
		return &game.GameSession{ID: acct.GameSessionARN(fleet, loc, id), IDString: id, FleetID: fleet, FleetARN: acct.FleetARN(fleet),
			Location: loc, ComputeName: "c1", CreationTime: now, MaximumPlayerSessionCount: 8, Status: game.SessionActive,
			PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.NoProtection}
	}
	gs := session("gs-1")
	compute := &game.Compute{FleetID: fleet, Name: "c1", Location: loc, Status: game.ComputeActive, CreationTime: now}
	if err := a.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertCompute(compute); err != nil {
			return err
		}
		return tx.InsertGameSession(gs)
	}); err != nil {
		t.Fatalf("the owner writes: %v", err)
	}
	refresh(b, bm)
	err := b.Update(ctx, func(tx store.Tx) error { return tx.InsertGameSession(session("gs-b")) })
	var no *store.NotOwner
	if !errors.As(err, &no) || no.NodeID != "node-a" || no.Address != "http://127.0.0.1:1" {
		t.Fatalf("a write from a node that does not own the fleet: %v, want NotOwner naming node-a", err)
	}

	// A write in flight holds the fence: the move waits for it, and it
	// commits under the old lease.
	inFlight, release := make(chan struct{}), make(chan struct{})
	writeDone := make(chan error, 1)
	go func() {
		writeDone <- a.Update(ctx, func(tx store.Tx) error {
			p := &game.PlayerSession{ID: "psess-1", GameSessionID: gs.ID, FleetID: fleet, PlayerID: "p1", Status: game.PlayerReserved, CreationTime: now}
			if err := tx.ReserveSeats(gs.ID, []*game.PlayerSession{p}, now.Add(-time.Minute)); err != nil {
				return err
			}
			close(inFlight)
			<-release
			return nil
		})
	}()
	<-inFlight
	moved := make(chan store.FleetOwner, 1)
	go func() {
		var got store.FleetOwner
		err := b.Update(ctx, func(tx store.Tx) error {
			var ok bool
			var err error
			got, ok, err = tx.MoveFleet(store.FleetOwner{FleetID: fleet, NodeID: "node-a", Epoch: 1}, "node-b")
			if err == nil && !ok {
				err = errors.New("lease not moved")
			}
			return err
		})
		if err != nil {
			t.Error(err)
		}
		moved <- got
	}()
	select {
	case <-moved:
		t.Fatal("the lease moved while a write of its holder was in flight")
	case <-time.After(200 * time.Millisecond): // only a failure ends sooner
	}
	close(release)
	if err := <-writeDone; err != nil {
		t.Fatalf("the write in flight: %v", err)
	}
	if l := <-moved; l.NodeID != "node-b" || l.Epoch != 2 {
		t.Fatalf("moved lease %+v", l)
	}

	// Node a still believes it holds epoch 1: every kind of fleet write is
	// refused, and nothing is written.
	writes := map[string]func(tx store.Tx) error{
		"insert session": func(tx store.Tx) error { return tx.InsertGameSession(session("gs-late")) },
		"update session": func(tx store.Tx) error { c := *gs; c.Name = "late"; return tx.UpdateGameSession(&c) },
		"reserve seats": func(tx store.Tx) error {
			return tx.ReserveSeats(gs.ID, []*game.PlayerSession{{ID: "psess-late", GameSessionID: gs.ID, FleetID: fleet, PlayerID: "p2",
				Status: game.PlayerReserved, CreationTime: now}}, now.Add(-time.Minute))
		},
		"put process": func(tx store.Tx) error {
			return tx.PutProcess(&game.Process{FleetID: fleet, ComputeName: "c1", PID: "1", Status: game.ProcessActive, CreationTime: now})
		},
		"claim process": func(tx store.Tx) error { _, err := tx.ClaimFreeProcess(fleet, loc, gs.ID, 0); return err },
		"register compute": func(tx store.Tx) error {
			return tx.InsertCompute(&game.Compute{FleetID: fleet, Name: "c2", Location: loc, Status: game.ComputePending, CreationTime: now})
		},
		"update compute":        func(tx store.Tx) error { c := *compute; c.IPAddress = "10.0.0.9"; return tx.UpdateCompute(&c) },
		"deregister compute":    func(tx store.Tx) error { return tx.DeleteCompute(fleet, "c1") },
		"fence alone (a fault)": func(tx store.Tx) error { return tx.FenceFleet(fleet) },
		"update fleet": func(tx store.Tx) error {
			f, err := tx.GetFleet(fleet)
			if err != nil {
				return err
			}
			f.Description = "late"
			return tx.UpdateFleet(f)
		},
	}
	if grouped {
		// The fence's refusal comes with the job's next statement that
		// needs an answer: a job that takes that statement's error for
		// something else and goes on is refused all the same.
		writes["refusal taken for not found"] = func(tx store.Tx) error {
			if err := tx.InsertGameSession(session("gs-late2")); err != nil {
				return err
			}
			if _, err := tx.GetCompute(fleet, "c9"); err == nil {
				return errors.New("compute c9 found")
			}
			return tx.InsertLocation(&game.Location{Name: "custom-late", ARN: acct.LocationARN("custom-late")})
		}
	}
	for name, write := range writes {
		if e, ok := am.Held(fleet); !ok || e != 1 {
			t.Fatalf("%s: node a should still believe it holds epoch 1", name)
		}
		err := a.Update(ctx, write)
		if !errors.As(err, &no) || no.NodeID != "node-b" {
			t.Errorf("%s from the old owner: %v, want NotOwner naming node-b", name, err)
		}
	}
	var cur, n int
	if err := b.View(ctx, func(tx store.Tx) error {
		s, err := tx.GetGameSession(gs.ID)
		if err != nil {
			return err
		}
		cur = s.CurrentPlayerSessionCount
		if s.Name != "" {
			t.Errorf("after the refused writes, the session is named %q", s.Name)
		}
		if _, err := tx.GetLocation("custom-late"); !game.IsKind(err, game.NotFound) {
			t.Errorf("after the refused writes, location custom-late: %v, want not found", err)
		}
		list, _, err := tx.ListGameSessions(store.SessionFilter{FleetID: fleet}, store.Page{Limit: 10})
		n = len(list)
		if err != nil {
			return err
		}
		computes, _, err := tx.ListComputes(fleet, store.ComputeFilter{}, store.Page{Limit: 10})
		if err == nil && (len(computes) != 1 || computes[0].Name != "c1" || computes[0].IPAddress != "") {
			t.Errorf("after the refused writes, the computes are %+v; want c1 alone, as it was", computes)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if cur != 1 || n != 1 {
		t.Fatalf("after the refused writes: %d seats taken, %d sessions; want 1 and 1", cur, n)
	}
	if err := b.Update(ctx, func(tx store.Tx) error { return tx.InsertGameSession(session("gs-b2")) }); err != nil {
		t.Fatalf("the new owner writes: %v", err)
	}
	if e, ok := bm.Held(fleet); !ok || e != 2 {
		t.Fatalf("the new owner learns its lease from the store: epoch %d, %v", e, ok)
	}
}
