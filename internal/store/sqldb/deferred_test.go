package sqldb_test

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// In a batch whose jobs defer their last statements (batch.go), a
// placement inserted with an id that is taken is found only after the
// jobs behind it ran: the batch runs again without deferring, and each
// job answers as alone. The taken id's job hears Conflict (its caller
// then answers the placement that exists), the others' placements are
// stored, and the one that was there is as it was.
func TestDeferredInsertOfATakenPlacementID(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			now := time.UnixMilli(time.Now().UnixMilli()).UTC()
			mk := func(id, sessionName string) *game.Placement {
				return &game.Placement{ID: id, QueueName: "q", QueueARN: "arn:aws:gamelift:us-west-2::gamesessionqueue/q",
					Status: game.PlacementPending, GameSessionName: sessionName,
					StartTime: now, Deadline: now.Add(time.Minute)}
			}
			w.update(func(tx store.Tx) error { return tx.InsertPlacement(mk("taken", "first")) })
			errs := w.db.RunBatch(
				func(tx store.Tx) error { return tx.InsertPlacement(mk("before", "x")) },
				func(tx store.Tx) error { return tx.InsertPlacement(mk("taken", "second")) },
				func(tx store.Tx) error { return tx.InsertPlacement(mk("after", "y")) },
			)
			if errs[0] != nil || !game.IsKind(errs[1], game.Conflict) || errs[2] != nil {
				t.Fatalf("inserts answered %v, want nil, Conflict, nil", errs)
			}
			for id, want := range map[string]string{"before": "x", "taken": "first", "after": "y"} {
				var got *game.Placement
				err := w.db.View(t.Context(), func(tx store.Tx) (err error) {
					got, err = tx.GetPlacement(id)
					return err
				})
				if err != nil || got.GameSessionName != want {
					t.Errorf("placement %s after the batch: %+v %v, want its session name %q", id, got, err, want)
				}
			}
		})
	}
}
