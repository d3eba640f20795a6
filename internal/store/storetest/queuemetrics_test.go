package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// TestQueueMetrics pins the queue aggregates: depth and average wait of
// PENDING placements at now, starts and final outcomes per window.
func TestQueueMetrics(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC() // a minute's start
		put := func(id, queue, status string, start, end time.Duration) {
			p := &game.Placement{ID: id, QueueName: queue, Status: game.PlacementPending, StartTime: t0.Add(start),
				Deadline: t0.Add(start + 10*time.Minute)}
			Update(t, st, func(tx store.Tx) error { return tx.InsertPlacement(p) })
			if status == game.PlacementPending {
				return
			}
			p.Status, p.EndTime = status, t0.Add(end)
			Update(t, st, func(tx store.Tx) error { return tx.UpdatePlacement(p) })
		}
		put("p-1", "q", game.PlacementPending, 0, 0)
		put("p-2", "q", game.PlacementPending, 30*time.Second, 0)
		put("p-3", "q", game.PlacementFulfilled, 10*time.Second, 20*time.Second)
		put("p-4", "q", game.PlacementTimedOut, -5*time.Minute, 50*time.Second)
		put("p-5", "q", game.PlacementCancelled, 40*time.Second, 61*time.Second) // ends next minute
		put("p-6", "q", game.PlacementFailed, 59*time.Second, 59*time.Second)
		put("p-7", "other", game.PlacementPending, 0, 0)
		var m, empty game.QueueMetrics
		View(t, st, func(tx store.Tx) error {
			var err error
			if m, err = tx.QueueMetrics("q", t0.Add(time.Minute), t0, t0.Add(time.Minute)); err != nil {
				return err
			}
			empty, err = tx.QueueMetrics("none", t0, t0, t0.Add(time.Minute))
			return err
		})
		want := game.QueueMetrics{Queue: "q", QueueDepth: 2, AverageWaitTime: 45, PlacementsStarted: 5,
			PlacementsSucceeded: 1, PlacementsFailed: 1, PlacementsTimedOut: 1}
		if m != want {
			t.Errorf("metrics\n got %+v\nwant %+v", m, want)
		}
		if (empty != game.QueueMetrics{Queue: "none"}) {
			t.Errorf("unknown queue: %+v", empty)
		}
		View(t, st, func(tx store.Tx) error {
			next, err := tx.QueueMetrics("q", t0.Add(2*time.Minute), t0.Add(time.Minute), t0.Add(2*time.Minute))
			if next.PlacementsCanceled != 1 || next.PlacementsStarted != 0 || next.AverageWaitTime != 105 {
				t.Errorf("next minute: %+v", next)
			}
			return err
		})
	})
}

// TestListPlacements pins the console's placement list: newest first,
// filtered by queue and status, paged.
func TestListPlacements(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		for i := range 7 {
			p := &game.Placement{ID: fmt.Sprintf("p-%d", i), QueueName: []string{"a", "b"}[i%2], Status: game.PlacementPending,
				StartTime: t0.Add(time.Duration(i/2) * time.Second)}
			if i == 4 {
				p.Status, p.EndTime = game.PlacementFulfilled, t0.Add(time.Minute)
			}
			Update(t, st, func(tx store.Tx) error { return tx.InsertPlacement(p) })
		}
		list := func(f store.PlacementFilter, limit int) []string {
			var ids []string
			View(t, st, func(tx store.Tx) error {
				token := ""
				for {
					ps, next, err := tx.ListPlacements(f, store.Page{Limit: limit, Token: token})
					if err != nil {
						return err
					}
					for _, p := range ps {
						ids = append(ids, p.ID)
					}
					if next == "" {
						return nil
					}
					token = next
				}
			})
			return ids
		}
		for _, c := range []struct {
			f     store.PlacementFilter
			limit int
			want  string
		}{
			{store.PlacementFilter{}, 2, "[p-6 p-5 p-4 p-3 p-2 p-1 p-0]"},
			{store.PlacementFilter{Queue: "a"}, 1, "[p-6 p-4 p-2 p-0]"},
			{store.PlacementFilter{Queue: "a", Status: game.PlacementPending}, 10, "[p-6 p-2 p-0]"},
			{store.PlacementFilter{Status: game.PlacementFulfilled}, 10, "[p-4]"},
			{store.PlacementFilter{Queue: "none"}, 10, "[]"},
		} {
			if got := fmt.Sprint(list(c.f, c.limit)); got != c.want {
				t.Errorf("%+v: %s, want %s", c.f, got, c.want)
			}
		}
		err := st.View(t.Context(), func(tx store.Tx) error {
			_, _, err := tx.ListPlacements(store.PlacementFilter{}, store.Page{Token: "junk!"})
			return err
		})
		if !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("bad token: %v", err)
		}
	})
}
