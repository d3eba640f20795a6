package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestMatchmakingRuleSets(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		body := "{\n  \"ruleLanguageVersion\": \"1.0\", // kept as sent\n  \"teams\": []\n}"
		Update(t, st, func(tx store.Tx) error {
			for i, n := range []string{"b-rules", "a-rules", "c.rules"} {
				rs := &game.MatchmakingRuleSet{Name: n, Body: body, CreationTime: t0.Add(time.Duration(i) * time.Second)}
				if err := tx.InsertRuleSet(rs); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertRuleSet(&game.MatchmakingRuleSet{Name: "a-rules", Body: "{}", CreationTime: t0})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate rule set: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			rs, err := tx.GetRuleSet("a-rules")
			if err != nil || rs.Body != body || !rs.CreationTime.Equal(t0.Add(time.Second)) {
				t.Errorf("GetRuleSet = %+v %v", rs, err)
			}
			if _, err := tx.GetRuleSet("nope"); !game.IsKind(err, game.NotFound) {
				t.Errorf("GetRuleSet(nope) = %v, want NotFound", err)
			}
			if n, err := tx.CountRuleSets(); n != 3 || err != nil {
				t.Errorf("CountRuleSets = %d %v", n, err)
			}
			page, next, err := tx.ListRuleSets(store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" || page[0].Name != "b-rules" || page[1].Name != "a-rules" {
				t.Fatalf("first page %v %q %v", page, next, err)
			}
			page, next, err = tx.ListRuleSets(store.Page{Limit: 2, Token: next})
			if err != nil || len(page) != 1 || next != "" || page[0].Name != "c.rules" {
				t.Fatalf("second page %v %q %v", page, next, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error { return tx.DeleteRuleSet("a-rules") })
		err = st.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteRuleSet("a-rules") })
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("second delete: %v, want NotFound", err)
		}
	})
}
