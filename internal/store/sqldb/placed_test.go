package sqldb_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The tests here hold the placements in flight that write transactions
// read from memory (placed.go) to the store, on SQLite and on PostgreSQL
// (grouped, pipelined): a placement ended behind the memory's back (as
// another node's queue deletion ends it) is never overwritten, and a
// node that forgets its memory (a gain or loss of a fleet) reads the
// store until it reloads the fleet's placed placements.

// placedPlacement stores a placement placed on a session of testFleet,
// as the placer writes it (its commit enters it in memory), and answers
// it and its session's id.
func (w *memWorld) placedPlacement(id string) (*game.Placement, string) {
	w.t.Helper()
	p := testPlacement(id)
	w.update(func(tx store.Tx) error { return tx.InsertPlacement(p) })
	gs := "arn:aws:gamelift:us-west-2::gamesession/" + testFleet + "/custom-a/gsess-" + id
	p.GameSessionID, p.GameSessionRegion, p.FleetID = gs, "custom-a", testFleet
	w.update(func(tx store.Tx) error { return tx.UpdatePlacement(p) })
	return p, gs
}

// behindBack writes p's row as another writer would.
func (w *memWorld) behindBack(p *game.Placement) {
	w.t.Helper()
	doc, err := json.Marshal(p)
	if err != nil {
		w.t.Fatal(err)
	}
	q := `UPDATE placements SET status = ?, doc = ? WHERE id = ?`
	if w.db.Dialect() == "postgres" {
		q = `UPDATE placements SET status = $1, doc = $2 WHERE id = $3`
	}
	if _, err := w.raw.Exec(q, p.Status, string(doc), p.ID); err != nil {
		w.t.Fatal(err)
	}
}

// storedPlacement answers placement id as a read transaction reads it.
func (w *memWorld) storedPlacement(id string) *game.Placement {
	w.t.Helper()
	var p *game.Placement
	if err := w.db.View(context.Background(), func(tx store.Tx) error {
		var err error
		p, err = tx.GetPlacement(id)
		return err
	}); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// activate runs what a session's activation does with its placement: it
// answers each status PlacementOfSession gave, attempt by attempt.
func (w *memWorld) activate(gs string) []string {
	w.t.Helper()
	var seen []string
	w.update(func(tx store.Tx) error {
		p, err := tx.PlacementOfSession(gs)
		if game.IsKind(err, game.NotFound) {
			seen = append(seen, "none")
			return nil
		}
		if err != nil {
			return err
		}
		seen = append(seen, p.Status+"/"+p.GameSessionData)
		p.Status = game.PlacementFulfilled
		return tx.UpdatePlacement(p)
	})
	return seen
}

func TestPlacedPlacementEndedBehindMemoryIsNotOverwritten(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			p, gs := w.placedPlacement("pl-1")
			failed := *p
			failed.Status = game.PlacementFailed
			w.behindBack(&failed) // another node deleted the queue
			// Memory still has it PENDING: the guarded end matches no
			// row, the batch runs again, and reads the store.
			if got := w.activate(gs); len(got) != 2 || got[0] != "PENDING/" || got[1] != "none" {
				t.Fatalf("attempts saw %q, want the memory's PENDING placement, then none", got)
			}
			if s := w.storedPlacement(p.ID); s.Status != game.PlacementFailed {
				t.Fatalf("stored placement is %s, want FAILED kept", s.Status)
			}

			// Unchanged behind its back, the memory's placement ends.
			p2, gs2 := w.placedPlacement("pl-2")
			if got := w.activate(gs2); len(got) != 1 || got[0] != "PENDING/" {
				t.Fatalf("attempts saw %q", got)
			}
			if s := w.storedPlacement(p2.ID); s.Status != game.PlacementFulfilled {
				t.Fatalf("stored placement is %s, want FULFILLED", s.Status)
			}
			// Ended, it leaves the memory: the store answers none.
			if got := w.activate(gs2); len(got) != 1 || got[0] != "none" {
				t.Fatalf("after its end, attempts saw %q", got)
			}
		})
	}
}

func TestPlacedPlacementsForgottenThenReloaded(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			p, gs := w.placedPlacement("pl-1")
			// A document the memory does not hold, still PENDING on the
			// same session: a read from memory answers the old one.
			changed := *p
			changed.GameSessionData = "store"
			w.behindBack(&changed)
			w.db.ForgetRecords() // a fleet gained or lost
			if got := w.readOnly(gs); got != "PENDING/store" {
				t.Fatalf("after ForgetRecords read %q, want the store's", got)
			}
			// Reloaded from the store (a takeover's load), then changed
			// behind its back again: the memory answers what it loaded.
			if err := w.db.LoadPlaced(context.Background(), []string{testFleet}); err != nil {
				t.Fatal(err)
			}
			changed.GameSessionData = "later"
			w.behindBack(&changed)
			if got := w.readOnly(gs); got != "PENDING/store" {
				t.Fatalf("after LoadPlaced read %q, want what was loaded", got)
			}
			// Its end is guarded by status and session only, which match.
			if got := w.activate(gs); len(got) != 1 || got[0] != "PENDING/store" {
				t.Fatalf("attempts saw %q", got)
			}
			if s := w.storedPlacement(p.ID); s.Status != game.PlacementFulfilled || s.GameSessionData != "store" {
				t.Fatalf("stored placement is %s/%s", s.Status, s.GameSessionData)
			}
		})
	}
}

// readOnly answers the placement of session gs that a write transaction
// reads, as status/data, writing nothing.
func (w *memWorld) readOnly(gs string) string {
	w.t.Helper()
	var out string
	w.update(func(tx store.Tx) error {
		p, err := tx.PlacementOfSession(gs)
		if err != nil {
			return err
		}
		out = p.Status + "/" + p.GameSessionData
		return nil
	})
	return out
}

// A placement that an earlier job of the same batch ended is read from
// the store, which has it ended, and not from the memory, which hears of
// the end only at commit.
func TestPlacedPlacementWrittenEarlierInBatchReadFromStore(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			p, gs := w.placedPlacement("pl-1")
			var second error
			errs := w.db.RunBatch(func(tx store.Tx) error {
				p, err := tx.PlacementOfSession(gs)
				if err != nil {
					return err
				}
				p.Status = game.PlacementFulfilled
				return tx.UpdatePlacement(p)
			}, func(tx store.Tx) error {
				_, second = tx.PlacementOfSession(gs)
				return nil
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("job %d: %v", i, err)
				}
			}
			if !game.IsKind(second, game.NotFound) {
				t.Fatalf("the second job read the placement (%v), want NotFound", second)
			}
			if s := w.storedPlacement(p.ID); s.Status != game.PlacementFulfilled {
				t.Fatalf("stored placement is %s", s.Status)
			}
		})
	}
}
