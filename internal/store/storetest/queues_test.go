package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestQueues(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		for i := range 5 {
			q := &game.Queue{Name: fmt.Sprintf("q-%d", i), ARN: fmt.Sprintf("arn:q-%d", i), TimeoutSeconds: 600, CreationTime: t0,
				Destinations: []string{"fleet-1"}, LatencyPolicies: []game.LatencyPolicy{{MaxLatencyMs: 50, DurationSeconds: 10}},
				PriorityOrder: []string{"LOCATION"}, LocationOrder: []string{"custom-a"}, NotificationTarget: "https://x"}
			Update(t, st, func(tx store.Tx) error { return tx.InsertQueue(q) })
		}
		err := st.Update(context.Background(), func(tx store.Tx) error { return tx.InsertQueue(&game.Queue{Name: "q-1"}) })
		if !game.IsKind(err, game.Conflict) {
			t.Errorf("duplicate: %v, want Conflict", err)
		}
		Update(t, st, func(tx store.Tx) error {
			q, err := tx.GetQueue("q-2")
			if err != nil {
				return err
			}
			if q.LatencyPolicies[0].MaxLatencyMs != 50 || q.LocationOrder[0] != "custom-a" || !q.CreationTime.Equal(t0) || q.NotificationTarget != "https://x" {
				t.Errorf("got %+v", q)
			}
			q.TimeoutSeconds = 30
			if err := tx.UpdateQueue(q); err != nil {
				return err
			}
			if err := tx.DeleteQueue("q-4"); err != nil {
				return err
			}
			if err := tx.DeleteQueue("q-4"); !game.IsKind(err, game.NotFound) {
				t.Errorf("second delete: %v", err)
			}
			if err := tx.UpdateQueue(&game.Queue{Name: "nope"}); !game.IsKind(err, game.NotFound) {
				t.Errorf("update missing: %v", err)
			}
			_, err = tx.GetQueue("q-4")
			if !game.IsKind(err, game.NotFound) {
				t.Errorf("get deleted: %v", err)
			}
			return nil
		})
		var names []string
		View(t, st, func(tx store.Tx) error {
			token := ""
			for {
				list, next, err := tx.ListQueues(store.Page{Limit: 3, Token: token})
				if err != nil {
					return err
				}
				for _, q := range list {
					names = append(names, q.Name)
					if q.Name == "q-2" && q.TimeoutSeconds != 30 {
						t.Errorf("q-2 not updated: %+v", q)
					}
				}
				if next == "" {
					return nil
				}
				token = next
			}
		})
		if fmt.Sprint(names) != "[q-0 q-1 q-2 q-3]" {
			t.Errorf("listed %v", names)
		}
		err = st.View(context.Background(), func(tx store.Tx) error { _, _, err := tx.ListQueues(store.Page{Token: "bad!"}); return err })
		if !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("bad token: %v", err)
		}
	})
}

func TestPlacements(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		mk := func(id, queue string, start time.Time) *game.Placement {
			return &game.Placement{ID: id, QueueName: queue, QueueARN: "arn:" + queue, Status: game.PlacementPending, MaxPlayers: 4,
				StartTime: start, Deadline: start.Add(time.Minute), Latencies: []game.PlayerLatency{{PlayerID: "p", Location: "custom-a", LatencyMs: 12.5}},
				Override: &game.PriorityOverride{LocationOrder: []string{"custom-a"}, Fallback: game.FallbackNone}}
		}
		for i, q := range []string{"a", "b", "a"} {
			p := mk(fmt.Sprintf("p-%d", i), q, t0.Add(time.Duration(i)*time.Second))
			Update(t, st, func(tx store.Tx) error { return tx.InsertPlacement(p) })
		}
		err := st.Update(context.Background(), func(tx store.Tx) error { return tx.InsertPlacement(mk("p-0", "a", t0)) })
		if !game.IsKind(err, game.Conflict) {
			t.Errorf("duplicate: %v, want Conflict", err)
		}
		Update(t, st, func(tx store.Tx) error {
			p, err := tx.GetPlacement("p-1")
			if err != nil {
				return err
			}
			if p.Latencies[0].LatencyMs != 12.5 || p.Override.Fallback != game.FallbackNone || !p.Deadline.Equal(t0.Add(61*time.Second)) {
				t.Errorf("got %+v", p)
			}
			p.GameSessionID = "arn:gs-1"
			if err := tx.UpdatePlacement(p); err != nil {
				return err
			}
			p0, err := tx.GetPlacement("p-0")
			if err != nil {
				return err
			}
			p0.Status, p0.EndTime = game.PlacementCancelled, t0
			return tx.UpdatePlacement(p0)
		})
		View(t, st, func(tx store.Tx) error {
			if p, err := tx.PlacementOfSession("arn:gs-1"); err != nil || p.ID != "p-1" {
				t.Errorf("of session: %v %v", p, err)
			}
			if _, err := tx.PlacementOfSession("arn:gs-2"); !game.IsKind(err, game.NotFound) {
				t.Errorf("of unknown session: %v", err)
			}
			if _, err := tx.GetPlacement("p-9"); !game.IsKind(err, game.NotFound) {
				t.Errorf("unknown: %v", err)
			}
			for _, tc := range []struct {
				q    store.PendingQuery
				want string
			}{
				{store.PendingQuery{}, "[p-1 p-2]"},
				{store.PendingQuery{Unplaced: true}, "[p-2]"},
				{store.PendingQuery{Queue: "b"}, "[p-1]"},
				{store.PendingQuery{DueBy: t0.Add(61 * time.Second)}, "[p-1]"},
				{store.PendingQuery{DueBy: t0.Add(59 * time.Second)}, "[]"},
				{store.PendingQuery{After: &game.Placement{ID: "p-1", StartTime: t0.Add(time.Second)}}, "[p-2]"},
				{store.PendingQuery{After: &game.Placement{ID: "p-0", StartTime: t0.Add(time.Second)}}, "[p-1 p-2]"},
			} {
				list, err := tx.ListPendingPlacements(tc.q, 10)
				if err != nil {
					return err
				}
				var ids []string
				for _, p := range list {
					ids = append(ids, p.ID)
				}
				if got := fmt.Sprint(ids); got != tc.want {
					t.Errorf("pending %+v = %s, want %s", tc.q, got, tc.want)
				}
			}
			return nil
		})
		// Free processes per location: ACTIVE, connected, healthy, idle.
		procs := []*game.Process{
			{PID: "1", Location: "custom-a", Status: game.ProcessActive, Connected: true, Healthy: true},
			{PID: "2", Location: "custom-a", Status: game.ProcessActive, Connected: true, Healthy: true},
			{PID: "3", Location: "custom-b", Status: game.ProcessActive, Connected: true, Healthy: true},
			{PID: "4", Location: "custom-b", Status: game.ProcessActive, Connected: true, Healthy: true, GameSessionID: "gs"},
			{PID: "5", Location: "custom-b", Status: game.ProcessActive, Connected: true, Healthy: false},
			{PID: "6", Location: "custom-b", Status: game.ProcessConnected, Connected: true, Healthy: true},
		}
		Update(t, st, func(tx store.Tx) error {
			for _, p := range procs {
				p.FleetID, p.ComputeName, p.CreationTime = "fleet-1", "c", t0
				if err := tx.PutProcess(p); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			for _, tc := range []struct {
				loc       string
				max, want int
			}{{"custom-a", 10, 2}, {"custom-a", 1, 1}, {"custom-b", 10, 1}, {"custom-c", 10, 0}} {
				n, err := tx.CountFreeProcesses("fleet-1", tc.loc, tc.max)
				if err != nil {
					return err
				}
				if n != tc.want {
					t.Errorf("free in %s (max %d) = %d, want %d", tc.loc, tc.max, n, tc.want)
				}
			}
			var err error
			return err
		})
	})
}
