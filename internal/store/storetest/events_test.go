package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestEvents(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		// Five events of fleet-a: three in the same millisecond, then two
		// later; one event of another fleet.
		times := []time.Time{t0, t0, t0, t0.Add(time.Second), t0.Add(2 * time.Second)}
		Update(t, st, func(tx store.Tx) error {
			for i, at := range times {
				e := &game.Event{ID: fmt.Sprintf("ev-%d", i), FleetID: "fleet-a", ResourceID: "fleet-a",
					Code: "GENERIC_EVENT", Message: fmt.Sprintf("m%d", i), Time: at}
				if err := tx.InsertEvent(e); err != nil {
					return err
				}
			}
			return tx.InsertEvent(&game.Event{ID: "ev-b", FleetID: "fleet-b", Code: "GENERIC_EVENT", Message: "b", Time: t0})
		})
		View(t, st, func(tx store.Tx) error {
			var got []string
			token := ""
			for pages := 0; ; pages++ {
				list, next, err := tx.ListEvents("fleet-a", time.Time{}, time.Time{}, store.Page{Limit: 2, Token: token})
				if err != nil {
					return err
				}
				for _, e := range list {
					got = append(got, e.ID)
				}
				if next == "" {
					if pages != 2 {
						t.Errorf("%d pages, want 3", pages+1)
					}
					break
				}
				token = next
			}
			if want := "[ev-0 ev-1 ev-2 ev-3 ev-4]"; fmt.Sprint(got) != want {
				t.Errorf("events %v, want %s (oldest first, insertion order within a millisecond)", got, want)
			}
			list, _, err := tx.ListEvents("fleet-a", t0.Add(time.Second), t0.Add(time.Second), store.Page{})
			if err != nil || len(list) != 1 || list[0].ID != "ev-3" || !list[0].Time.Equal(t0.Add(time.Second)) {
				t.Errorf("bounded list %v %v, want ev-3 only (bounds inclusive)", list, err)
			}
			list, _, err = tx.ListEvents("fleet-a", t0.Add(time.Second), time.Time{}, store.Page{})
			if err != nil || len(list) != 2 {
				t.Errorf("start-only list %v %v, want 2", list, err)
			}
			list, _, err = tx.ListEvents("fleet-a", time.Time{}, t0, store.Page{})
			if err != nil || len(list) != 3 {
				t.Errorf("end-only list %v %v, want 3", list, err)
			}
			if _, _, err := tx.ListEvents("fleet-a", time.Time{}, time.Time{}, store.Page{Token: "%%"}); !game.IsKind(err, game.InvalidRequest) {
				t.Errorf("bad token: %v, want InvalidRequest", err)
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertEvent(&game.Event{ID: "ev-0", FleetID: "fleet-a", Time: t0})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Errorf("duplicate event id: %v, want Conflict", err)
		}
	})
}
