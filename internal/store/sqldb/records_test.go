package sqldb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// ownerWorld is the PostgreSQL memWorld of a node "n1" that owns
// testFleet at epoch 1 and keeps its fleets' records between its writes
// (KeepOwnedRecords), or nil without PostgreSQL.
func ownerWorld(t *testing.T) (*memWorld, *fakeOwners) {
	open := memWorlds(t)["postgres"]
	if open == nil {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	w := open(t)
	if _, err := w.raw.Exec(`INSERT INTO fleet_owners (fleet_id, node_id, epoch) VALUES ('` + testFleet + `', 'n1', 1)`); err != nil {
		t.Fatal(err)
	}
	owners := &fakeOwners{held: 1}
	w.db.SetOwners(owners)
	w.db.KeepOwnedRecords()
	w.update(func(tx store.Tx) error {
		return tx.InsertCompute(&game.Compute{FleetID: testFleet, Name: "c1", Location: "custom-a", Status: game.ComputeActive,
			IPAddress: "10.0.0.1", CreationTime: time.Now()})
	})
	return w, owners
}

// computeIP answers compute c1's address as a write transaction reads it.
func (w *memWorld) computeIP() string {
	w.t.Helper()
	var ip string
	w.update(func(tx store.Tx) error {
		c, err := tx.GetCompute(testFleet, "c1")
		if err == nil {
			ip = c.IPAddress
		}
		return err
	})
	return ip
}

// behindTheBack changes compute c1's address in the database without the
// store, as nothing may while the node holds the fleet.
func (w *memWorld) behindTheBack(from, to string) {
	w.t.Helper()
	if _, err := w.raw.Exec(`UPDATE computes SET doc = replace(doc, '` + from + `', '` + to + `') WHERE name = 'c1'`); err != nil {
		w.t.Fatal(err)
	}
}

// On the owner, a compute read in one write is kept for the next ones:
// a change the store did not make is not seen there (it reads no row),
// while reads outside writes see it; the store's own write of a compute
// is read back at once; and ForgetRecords (a gain or a loss of a fleet)
// drops what was kept.
func TestOwnerKeepsComputesBetweenWrites(t *testing.T) {
	w, _ := ownerWorld(t)
	if ip := w.computeIP(); ip != "10.0.0.1" {
		t.Fatalf("first read: %q", ip)
	}
	w.behindTheBack("10.0.0.1", "10.0.0.2")
	if ip := w.computeIP(); ip != "10.0.0.1" {
		t.Fatalf("a write's read after a change behind the store's back: %q, want the kept 10.0.0.1", ip)
	}
	if err := w.db.View(context.Background(), func(tx store.Tx) error {
		c, err := tx.GetCompute(testFleet, "c1")
		if err == nil && c.IPAddress != "10.0.0.2" {
			t.Errorf("a read transaction: %q, want the store's 10.0.0.2", c.IPAddress)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w.update(func(tx store.Tx) error {
		c, err := tx.GetCompute(testFleet, "c1")
		if err != nil {
			return err
		}
		c.IPAddress = "10.0.0.3"
		return tx.UpdateCompute(c)
	})
	if ip := w.computeIP(); ip != "10.0.0.3" {
		t.Fatalf("after the store's write: %q, want 10.0.0.3", ip)
	}
	w.behindTheBack("10.0.0.3", "10.0.0.4")
	w.db.ForgetRecords()
	if ip := w.computeIP(); ip != "10.0.0.4" {
		t.Fatalf("after ForgetRecords: %q, want the store's 10.0.0.4", ip)
	}
	// A failed job that wrote the compute leaves nothing of its write kept.
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		c, err := tx.GetCompute(testFleet, "c1")
		if err != nil {
			return err
		}
		c.IPAddress = "10.0.0.5"
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		if _, err := tx.GetCompute(testFleet, "c1"); err != nil {
			return err
		}
		return errOnPurpose
	})
	if !errors.Is(err, errOnPurpose) {
		t.Fatal(err)
	}
	if ip := w.computeIP(); ip != "10.0.0.4" {
		t.Fatalf("after a failed write: %q, want 10.0.0.4", ip)
	}
}

// A compute kept at one epoch is read, and the fence finds the node's
// lease at another (it lost the fleet and got it back, and another node
// may have changed the compute meanwhile): the job fails and writes
// nothing, as a job that read sessions from memory does.
func TestKeptComputeFencedAtAnotherEpoch(t *testing.T) {
	w, owners := ownerWorld(t)
	w.computeIP() // kept
	if _, err := w.raw.Exec(`UPDATE fleet_owners SET epoch = 2`); err != nil {
		t.Fatal(err)
	}
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.GetCompute(testFleet, "c1"); err != nil {
			return err
		}
		return tx.InsertLocation(&game.Location{Name: "custom-late", ARN: "arn:custom-late"})
	})
	if err == nil || !strings.Contains(err.Error(), "epoch 2") {
		t.Fatalf("a write that read a kept compute at epoch 1, fenced at 2: %v, want it refused", err)
	}
	if owners.held != 2 {
		t.Errorf("held epoch %d after the fence, want 2 (adopted)", owners.held)
	}
	var n int
	if err := w.raw.QueryRow(`SELECT COUNT(*) FROM locations WHERE name = 'custom-late'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused write's location: %d rows (%v)", n, err)
	}
}
