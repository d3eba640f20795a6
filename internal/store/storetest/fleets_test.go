package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestFleets(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		mk := func(id string, at time.Time, locs ...string) *game.Fleet {
			return &game.Fleet{ID: id, ARN: "arn:" + id, Name: "n-" + id, Status: game.FleetActive, CreationTime: at,
				ComputeType: "ANYWHERE", Locations: locs, MetricGroups: []string{"default"},
				Runtime: game.RuntimeConfiguration{ServerProcesses: []game.ServerProcess{{LaunchPath: "/srv/game", ConcurrentExecutions: 2}}}}
		}
		Update(t, st, func(tx store.Tx) error {
			for _, f := range []*game.Fleet{mk("fleet-b", t0, "custom-x"), mk("fleet-a", t0, "custom-x", "custom-y"), mk("fleet-c", t0.Add(time.Second), "custom-y")} {
				if err := tx.InsertFleet(f); err != nil {
					return err
				}
			}
			return nil
		})
		if err := st.Update(t.Context(), func(tx store.Tx) error { return tx.InsertFleet(mk("fleet-a", t0)) }); !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate fleet: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			f, err := tx.GetFleet("fleet-a")
			if err != nil {
				return err
			}
			if len(f.Locations) != 2 || f.Runtime.ServerProcesses[0].ConcurrentExecutions != 2 || !f.CreationTime.Equal(t0) {
				t.Errorf("round trip: %+v", f)
			}
			page, next, err := tx.ListFleets(store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" || page[0].ID != "fleet-a" || page[1].ID != "fleet-b" {
				t.Fatalf("first page %v %q %v", page, next, err)
			}
			page, next, err = tx.ListFleets(store.Page{Limit: 2, Token: next})
			if err != nil || len(page) != 1 || next != "" || page[0].ID != "fleet-c" {
				t.Fatalf("second page %v %q %v", page, next, err)
			}
			ids, err := tx.FleetsInLocation("custom-y")
			if err != nil || len(ids) != 2 || ids[0] != "fleet-a" || ids[1] != "fleet-c" {
				t.Errorf("FleetsInLocation = %v %v", ids, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			f, err := tx.GetFleet("fleet-a")
			if err != nil {
				return err
			}
			f.Name, f.Locations = "renamed", []string{"custom-x"}
			return tx.UpdateFleet(f)
		})
		Update(t, st, func(tx store.Tx) error { return tx.DeleteFleet("fleet-b") })
		View(t, st, func(tx store.Tx) error {
			if f, err := tx.GetFleet("fleet-a"); err != nil || f.Name != "renamed" {
				t.Errorf("after update: %+v %v", f, err)
			}
			if ids, _ := tx.FleetsInLocation("custom-x"); len(ids) != 1 || ids[0] != "fleet-a" {
				t.Errorf("custom-x users after update and delete: %v", ids)
			}
			if _, err := tx.GetFleet("fleet-b"); !game.IsKind(err, game.NotFound) {
				t.Errorf("deleted fleet: %v, want NotFound", err)
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteFleet("fleet-b") })
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("second delete: %v, want NotFound", err)
		}
		err = st.Update(t.Context(), func(tx store.Tx) error { return tx.UpdateFleet(mk("fleet-zz", t0)) })
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("update of a missing fleet: %v, want NotFound", err)
		}
	})
}
