package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Concurrent write transactions are isolated from each other's failures:
// on SQLite they are committed together (group commit), each under its own
// savepoint, so a failing one leaves no trace and the others all land.
func TestConcurrentUpdatesFailAlone(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		const n = 60
		errWanted := errors.New("refused on purpose")
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = st.Update(context.Background(), func(tx store.Tx) error {
					name := fmt.Sprintf("custom-g%d", i)
					if err := tx.InsertLocation(&game.Location{Name: name, ARN: "arn:" + name, CreationTime: time.Now()}); err != nil {
						return err
					}
					if i%5 == 0 {
						return errWanted // after a write: it must be undone
					}
					if i%7 == 0 { // a failing statement inside the transaction
						if err := tx.InsertLocation(&game.Location{Name: name, ARN: "dup", CreationTime: time.Now()}); err != nil {
							return err
						}
					}
					return nil
				})
			}(i)
		}
		wg.Wait()
		View(t, st, func(tx store.Tx) error {
			for i := 0; i < n; i++ {
				_, err := tx.GetLocation(fmt.Sprintf("custom-g%d", i))
				shouldFail := i%5 == 0 || i%7 == 0
				switch {
				case shouldFail && errs[i] == nil:
					t.Errorf("transaction %d should have failed", i)
				case shouldFail && !game.IsKind(err, game.NotFound):
					t.Errorf("failed transaction %d left its write: %v", i, err)
				case !shouldFail && (errs[i] != nil || err != nil):
					t.Errorf("transaction %d: update %v, read %v", i, errs[i], err)
				}
			}
			return nil
		})
	})
}

// A write that grouped PostgreSQL sends later, with the job's next
// statement or at its end (an update whose only answer is "not found", a
// player session's insert), still fails its own transaction when it
// fails, undoes that transaction's other writes, and leaves the others
// of the batch alone.
func TestQueuedWriteFailsItsTransaction(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		Update(t, st, func(tx store.Tx) error {
			return tx.InsertPlacement(&game.Placement{ID: "pl-0", QueueName: "q", Status: game.PlacementPending, StartTime: t0})
		})
		const n = 40
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = st.Update(context.Background(), func(tx store.Tx) error {
					name := fmt.Sprintf("custom-q%d", i)
					if err := tx.InsertLocation(&game.Location{Name: name, ARN: "arn:" + name, CreationTime: t0}); err != nil {
						return err
					}
					id := "pl-0"
					if i%3 == 0 {
						id = fmt.Sprintf("pl-missing-%d", i) // fails: not found
					}
					p := &game.Placement{ID: id, QueueName: "q", Status: game.PlacementPending, StartTime: t0,
						GameSessionName: name}
					if err := tx.UpdatePlacement(p); err != nil {
						return err
					}
					if i%4 == 1 {
						// A later statement in the same transaction, after the
						// update that may still be waiting to be sent.
						_, err := tx.GetLocation(name)
						return err
					}
					return nil
				})
			}(i)
		}
		wg.Wait()
		View(t, st, func(tx store.Tx) error {
			for i := 0; i < n; i++ {
				_, err := tx.GetLocation(fmt.Sprintf("custom-q%d", i))
				switch {
				case i%3 == 0 && !game.IsKind(errs[i], game.NotFound):
					t.Errorf("transaction %d updated a missing placement: %v", i, errs[i])
				case i%3 == 0 && !game.IsKind(err, game.NotFound):
					t.Errorf("failed transaction %d left its write: %v", i, err)
				case i%3 != 0 && (errs[i] != nil || err != nil):
					t.Errorf("transaction %d: update %v, read %v", i, errs[i], err)
				}
			}
			p, err := tx.GetPlacement("pl-0")
			if err != nil || p.GameSessionName == "" {
				t.Errorf("pl-0 = %+v, %v", p, err)
			}
			return nil
		})
	})
}
