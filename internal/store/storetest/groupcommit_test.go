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
