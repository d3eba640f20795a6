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

func appendNote(t *testing.T, st store.Store, id string, at time.Time, target string) int64 {
	t.Helper()
	n := &game.Notification{ID: id, Time: at, Type: "PlacementFulfilled", Resource: "arn:q", Target: target,
		Envelope: []byte(`{"id":"` + id + `"}`)}
	Update(t, st, func(tx store.Tx) error { return tx.AppendNotification(n) })
	return n.Seq
}

func TestWebhookDeliveries(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		s1 := appendNote(t, st, "w-1", t0, "http://hook")
		s2 := appendNote(t, st, "w-2", t0, "http://hook")
		Update(t, st, func(tx store.Tx) error {
			cur, err := tx.WebhookCursor()
			if err != nil || cur != 0 {
				t.Fatalf("cursor %d %v, want 0", cur, err)
			}
			for _, s := range []int64{s1, s2, s1} {
				if err := tx.AddWebhookDelivery(&store.WebhookDelivery{Seq: s, Target: "http://hook", NextAttempt: t0}); err != nil {
					return err
				}
			}
			if ok, err := tx.AdvanceWebhookCursor(1_000_000, s2); ok || err != nil {
				t.Errorf("advance from a wrong position: %v %v", ok, err)
			}
			ok, err := tx.AdvanceWebhookCursor(0, s2)
			if !ok {
				t.Errorf("advance: %v %v", ok, err)
			}
			return err
		})
		due := func(at time.Time, want bool) {
			t.Helper()
			View(t, st, func(tx store.Tx) error {
				got, err := tx.WebhookDeliveriesDue(at)
				if err == nil && got != want {
					t.Errorf("deliveries due at %v: %v, want %v", at.Sub(t0), got, want)
				}
				return err
			})
		}
		due(t0, true)
		var claimed []*store.WebhookDelivery
		Update(t, st, func(tx store.Tx) (err error) {
			claimed, err = tx.ClaimWebhookDeliveries("a", t0, t0.Add(time.Minute), 10)
			return err
		})
		if len(claimed) != 2 || claimed[0].Seq != s1 || claimed[0].Notification == nil ||
			string(claimed[0].Notification.Envelope) != `{"id":"w-1"}` || claimed[1].Notification.ID != "w-2" {
			t.Fatalf("claimed %+v", claimed)
		}
		// Leased: nobody else may claim them until the lease runs out.
		due(t0.Add(30*time.Second), false)
		Update(t, st, func(tx store.Tx) error {
			again, err := tx.ClaimWebhookDeliveries("b", t0.Add(30*time.Second), t0.Add(time.Minute), 10)
			if len(again) != 0 {
				t.Errorf("claimed while leased: %d", len(again))
			}
			return err
		})
		// Owner a delivers w-1 and fails w-2 once; b cannot finish a's work.
		Update(t, st, func(tx store.Tx) error {
			d := *claimed[1]
			d.Attempts, d.NextAttempt, d.LastError = 1, t0.Add(2*time.Minute), "HTTP 500"
			if ok, err := tx.FinishWebhookAttempt(&d, "b"); ok || err != nil {
				t.Errorf("finish by a non-owner: %v %v", ok, err)
			}
			if ok, err := tx.FinishWebhookAttempt(&d, "a"); !ok || err != nil {
				t.Errorf("finish: %v %v", ok, err)
			}
			d1 := *claimed[0]
			d1.State, d1.Attempts = store.WebhookDelivered, 1
			_, err := tx.FinishWebhookAttempt(&d1, "a")
			return err
		})
		View(t, st, func(tx store.Tx) error {
			d, err := tx.GetWebhookDelivery(s2)
			if err != nil || d.Attempts != 1 || d.Owner != "" || !d.NextAttempt.Equal(t0.Add(2*time.Minute)) || d.LastError != "HTTP 500" {
				t.Errorf("after a failed attempt: %+v %v", d, err)
			}
			if _, err := tx.GetWebhookDelivery(999999); !game.IsKind(err, game.NotFound) {
				t.Errorf("unknown delivery: %v", err)
			}
			return nil
		})
		// Not due before its next attempt.
		due(t0.Add(time.Minute), false)
		due(t0.Add(2*time.Minute), true)
		Update(t, st, func(tx store.Tx) error {
			got, err := tx.ClaimWebhookDeliveries("b", t0.Add(time.Minute), t0.Add(2*time.Minute), 10)
			if len(got) != 0 {
				t.Errorf("claimed before due: %d", len(got))
			}
			return err
		})
		// Retention keeps the pending w-2 and events past the cursor.
		s3 := appendNote(t, st, "w-3", t0, "")
		Update(t, st, func(tx store.Tx) error {
			n, err := tx.PruneOutbox(t0.Add(time.Hour))
			if n != 1 {
				t.Errorf("pruned %d, want 1 (w-1)", n)
			}
			return err
		})
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(0, 10)
			if len(list) != 2 || list[0].Seq != s2 || list[1].Seq != s3 {
				t.Errorf("after prune: %v", list)
			}
			if _, err := tx.GetWebhookDelivery(s1); !game.IsKind(err, game.NotFound) {
				t.Errorf("finished delivery of a pruned event kept: %v", err)
			}
			return err
		})
	})
}

// Two claimers racing over the same due deliveries never both hold one.
func TestWebhookClaimsExclusive(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		var notes []*game.Notification
		Update(t, st, func(tx store.Tx) error {
			for i := range 40 {
				n := &game.Notification{ID: fmt.Sprint("x-", i), Time: t0, Type: "T", Resource: "r", Target: "http://h", Envelope: []byte("{}")}
				if err := tx.AppendNotification(n); err != nil {
					return err
				}
				notes = append(notes, n)
			}
			return nil
		})
		// Each seq is known once its append has committed.
		Update(t, st, func(tx store.Tx) error {
			for _, n := range notes {
				if err := tx.AddWebhookDelivery(&store.WebhookDelivery{Seq: n.Seq, Target: "http://h", NextAttempt: t0}); err != nil {
					return err
				}
			}
			return nil
		})
		var mu sync.Mutex
		owners := map[int64]string{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprint("node-", w)
				for range 200 {
					mu.Lock()
					done := len(owners) == 40
					mu.Unlock()
					if done {
						return
					}
					var got []*store.WebhookDelivery
					err := st.Update(context.Background(), func(tx store.Tx) (err error) {
						got, err = tx.ClaimWebhookDeliveries(owner, t0, t0.Add(time.Minute), 3)
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, d := range got {
						if prev, dup := owners[d.Seq]; dup {
							t.Errorf("seq %d claimed by %s and %s", d.Seq, prev, owner)
						}
						owners[d.Seq] = owner
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(owners) != 40 {
			t.Errorf("%d of 40 claimed", len(owners))
		}
	})
}
