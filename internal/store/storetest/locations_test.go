package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestLocations(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := time.UnixMilli(1767225600500).UTC()
		Update(t, st, func(tx store.Tx) error {
			for _, n := range []string{"custom-b", "custom-a", "custom-c"} {
				if err := tx.InsertLocation(&game.Location{Name: n, ARN: "arn:" + n, CreationTime: now}); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertLocation(&game.Location{Name: "custom-a", ARN: "x", CreationTime: now})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate insert: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			l, err := tx.GetLocation("custom-a")
			if err != nil {
				return err
			}
			if !l.CreationTime.Equal(now) || l.ARN != "arn:custom-a" {
				t.Errorf("got %+v", l)
			}
			page, next, err := tx.ListLocations(store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" || page[0].Name != "custom-a" {
				t.Fatalf("first page %v %q %v", page, next, err)
			}
			page, next, err = tx.ListLocations(store.Page{Limit: 2, Token: next})
			if err != nil || len(page) != 1 || next != "" || page[0].Name != "custom-c" {
				t.Fatalf("second page %v %q %v", page, next, err)
			}
			if _, _, err := tx.ListLocations(store.Page{Token: "!!"}); !game.IsKind(err, game.InvalidRequest) {
				t.Errorf("bad token: %v", err)
			}
			return nil
		})
	})
}
