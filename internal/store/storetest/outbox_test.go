package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestOutbox(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		var seqs []int64
		for i := range 3 {
			n := &game.Notification{ID: fmt.Sprintf("n-%d", i), Time: t0.Add(time.Duration(i) * time.Minute),
				Type: "PlacementFulfilled", Resource: "arn:q", Target: "http://x", Envelope: []byte(`{"i":` + fmt.Sprint(i) + `}`)}
			Update(t, st, func(tx store.Tx) error { return tx.AppendNotification(n) })
			seqs = append(seqs, n.Seq)
		}
		if !(seqs[0] > 0 && seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
			t.Fatalf("seqs %v, want increasing from 1", seqs)
		}
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(seqs[0], 10)
			if err != nil {
				return err
			}
			if len(list) != 2 || list[0].ID != "n-1" || list[1].ID != "n-2" || string(list[1].Envelope) != `{"i":2}` ||
				!list[0].Time.Equal(t0.Add(time.Minute)) || list[0].Target != "http://x" || list[0].Seq != seqs[1] {
				t.Errorf("after first: %+v", list)
			}
			last, err := tx.LastNotificationSeq()
			if err != nil || last != seqs[2] {
				t.Errorf("last %d %v, want %d", last, err, seqs[2])
			}
			return nil
		})
		err := st.Update(context.Background(), func(tx store.Tx) error {
			return tx.AppendNotification(&game.Notification{ID: "n-0", Time: t0, Type: "x", Resource: "r", Envelope: []byte("{}")})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Errorf("duplicate id: %v, want Conflict", err)
		}
		Update(t, st, func(tx store.Tx) error {
			n, err := tx.DeleteNotificationsBefore(t0.Add(90 * time.Second))
			if err == nil && n != 2 {
				t.Errorf("deleted %d, want 2", n)
			}
			return err
		})
		// Concurrent appends: every seq is distinct and a reader never
		// sees a gap that fills in later.
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					_ = st.Update(context.Background(), func(tx store.Tx) error {
						return tx.AppendNotification(&game.Notification{ID: fmt.Sprintf("c-%d-%d", w, i), Time: t0,
							Type: "x", Resource: "r", Envelope: []byte("{}")})
					})
				}
			}()
		}
		wg.Wait()
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(seqs[2], 100)
			if err == nil && len(list) != 40 {
				t.Errorf("%d concurrent notifications, want 40", len(list))
			}
			return err
		})
	})
}
