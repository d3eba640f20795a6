package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestAliases(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		Update(t, st, func(tx store.Tx) error {
			for i, a := range []*game.Alias{
				{ID: "alias-1", Name: "live", RoutingType: game.RoutingSimple, FleetID: "fleet-a"},
				{ID: "alias-2", Name: "live", RoutingType: game.RoutingTerminal, Message: "gone"},
				{ID: "alias-3", Name: "test", RoutingType: game.RoutingSimple, FleetID: "fleet-b"},
			} {
				a.CreationTime = t0.Add(time.Duration(i) * time.Second)
				a.LastUpdatedTime = a.CreationTime
				if err := tx.InsertAlias(a); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error { return tx.InsertAlias(&game.Alias{ID: "alias-1", RoutingType: "SIMPLE"}) })
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate alias: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			a, err := tx.GetAlias("alias-2")
			if err != nil || a.Message != "gone" || !a.CreationTime.Equal(t0.Add(time.Second)) {
				t.Errorf("GetAlias = %+v %v", a, err)
			}
			cases := []struct {
				typ, name string
				want      int
			}{{"", "", 3}, {"SIMPLE", "", 2}, {"", "live", 2}, {"SIMPLE", "live", 1}, {"TERMINAL", "test", 0}}
			for _, c := range cases {
				list, _, err := tx.ListAliases(c.typ, c.name, store.Page{})
				if err != nil || len(list) != c.want {
					t.Errorf("ListAliases(%q, %q) = %d %v, want %d", c.typ, c.name, len(list), err, c.want)
				}
			}
			page, next, err := tx.ListAliases("", "", store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" {
				t.Fatalf("first page %v %q %v", page, next, err)
			}
			page, next, err = tx.ListAliases("", "", store.Page{Limit: 2, Token: next})
			if err != nil || len(page) != 1 || next != "" || page[0].ID != "alias-3" {
				t.Fatalf("second page %v %q %v", page, next, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			a, err := tx.GetAlias("alias-1")
			if err != nil {
				return err
			}
			a.RoutingType, a.FleetID, a.Message = game.RoutingTerminal, "", "closed"
			if err := tx.UpdateAlias(a); err != nil {
				return err
			}
			return tx.DeleteAlias("alias-3")
		})
		View(t, st, func(tx store.Tx) error {
			if list, _, _ := tx.ListAliases("TERMINAL", "", store.Page{}); len(list) != 2 {
				t.Errorf("TERMINAL aliases after update: %d, want 2", len(list))
			}
			if _, err := tx.GetAlias("alias-3"); !game.IsKind(err, game.NotFound) {
				t.Errorf("deleted alias: %v", err)
			}
			return nil
		})
		for _, fn := range []func(store.Tx) error{
			func(tx store.Tx) error { return tx.DeleteAlias("alias-3") },
			func(tx store.Tx) error { return tx.UpdateAlias(&game.Alias{ID: "alias-9", RoutingType: "SIMPLE"}) },
		} {
			if err := st.Update(t.Context(), fn); !game.IsKind(err, game.NotFound) {
				t.Errorf("on a missing alias: %v, want NotFound", err)
			}
		}
	})
}
