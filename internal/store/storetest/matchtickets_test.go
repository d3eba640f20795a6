package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestMatchmakingConfigurations(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		Update(t, st, func(tx store.Tx) error {
			for i, n := range []string{"b", "a", "c"} {
				rs := "rules-1"
				if n == "c" {
					rs = "rules-2"
				}
				c := &game.MatchmakingConfiguration{Name: n, RuleSetName: rs, RequestTimeoutSeconds: 30, FlexMatchMode: game.FlexMatchStandalone,
					Properties: []game.Property{{Key: "k", Value: "v"}}, CreationTime: t0.Add(time.Duration(i) * time.Second)}
				if err := tx.InsertMatchConfig(c); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertMatchConfig(&game.MatchmakingConfiguration{Name: "a", CreationTime: t0})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate: %v", err)
		}
		Update(t, st, func(tx store.Tx) error {
			c, err := tx.GetMatchConfig("a")
			if err != nil || c.RequestTimeoutSeconds != 30 || c.Properties[0].Value != "v" || !c.CreationTime.Equal(t0.Add(time.Second)) {
				t.Fatalf("get %+v %v", c, err)
			}
			c.RuleSetName = "rules-2"
			return tx.UpdateMatchConfig(c)
		})
		View(t, st, func(tx store.Tx) error {
			if n, err := tx.CountMatchConfigs(); n != 3 || err != nil {
				t.Errorf("count %d %v", n, err)
			}
			page, next, err := tx.ListMatchConfigs("", store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" || page[0].Name != "b" || page[1].Name != "a" {
				t.Fatalf("first page %v %q %v", page, next, err)
			}
			page, next, err = tx.ListMatchConfigs("", store.Page{Limit: 2, Token: next})
			if err != nil || len(page) != 1 || next != "" {
				t.Fatalf("second page %v %q %v", page, next, err)
			}
			using, _, err := tx.ListMatchConfigs("rules-2", store.Page{Limit: 10})
			if err != nil || len(using) != 2 || using[0].Name != "a" || using[1].Name != "c" {
				t.Errorf("by rule set %v %v", using, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			if err := tx.DeleteMatchConfig("a"); err != nil {
				return err
			}
			if err := tx.DeleteMatchConfig("a"); !game.IsKind(err, game.NotFound) {
				t.Errorf("second delete %v", err)
			}
			if _, err := tx.GetMatchConfig("a"); !game.IsKind(err, game.NotFound) {
				t.Errorf("get deleted %v", err)
			}
			return nil
		})
	})
}

func TestMatchmakingTickets(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		n := 10.0
		Update(t, st, func(tx store.Tx) error {
			for i, id := range []string{"t1", "t2", "t3"} {
				tk := &game.MatchTicket{ID: id, ConfigName: "cfg", Status: game.TicketSearching, StartTime: t0.Add(time.Duration(i) * time.Second),
					Deadline: t0.Add(time.Duration(10+i) * time.Second),
					Players:  []game.TicketPlayer{{ID: "p-" + id, Attributes: map[string]game.AttributeValue{"skill": {N: &n}}, LatencyMs: map[string]int{"x": 5}}}}
				if err := tx.InsertTicket(tk); err != nil {
					return err
				}
			}
			return tx.InsertTicket(&game.MatchTicket{ID: "other", ConfigName: "cfg2", Status: game.TicketQueued, StartTime: t0,
				Deadline: t0, Players: []game.TicketPlayer{{ID: "p-t1"}}})
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertTicket(&game.MatchTicket{ID: "t1", ConfigName: "cfg", StartTime: t0})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate ticket: %v", err)
		}
		View(t, st, func(tx store.Tx) error {
			tk, err := tx.GetTicket("t1")
			if err != nil || *tk.Players[0].Attributes["skill"].N != 10 || tk.Players[0].LatencyMs["x"] != 5 || !tk.StartTime.Equal(t0) {
				t.Fatalf("get %+v %v", tk, err)
			}
			pool, err := tx.ListTickets("cfg", game.TicketSearching, "", 2)
			if err != nil || len(pool) != 2 || pool[0].ID != "t1" || pool[1].ID != "t2" {
				t.Fatalf("pool %v %v", pool, err)
			}
			rest, err := tx.ListTickets("cfg", game.TicketSearching, "t2", 2)
			if err != nil || len(rest) != 1 || rest[0].ID != "t3" {
				t.Fatalf("pool after t2 %v %v", rest, err)
			}
			due, err := tx.ListDueTickets("cfg", game.TicketSearching, t0.Add(11*time.Second), 10)
			if err != nil || len(due) != 2 {
				t.Errorf("due %v %v", due, err)
			}
			mine, err := tx.ActiveTicketsOfPlayer("p-t1")
			if err != nil || len(mine) != 2 {
				t.Errorf("tickets of p-t1 %v %v", mine, err)
			}
			if n, err := tx.CountActiveTickets("cfg"); n != 3 || err != nil {
				t.Errorf("active %d %v", n, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			tk, err := tx.GetTicket("t1")
			if err != nil {
				return err
			}
			tk.Status, tk.EndTime = game.TicketCancelled, t0.Add(time.Minute)
			return tx.UpdateTicket(tk)
		})
		Update(t, st, func(tx store.Tx) error {
			if n, err := tx.DeleteEndedTickets(t0.Add(time.Minute), 10); n != 0 || err != nil {
				t.Errorf("delete before the end: %d %v", n, err)
			}
			if n, err := tx.DeleteEndedTickets(t0.Add(time.Minute+time.Millisecond), 10); n != 1 || err != nil {
				t.Errorf("delete after the end: %d %v", n, err)
			}
			if _, err := tx.GetTicket("t1"); !game.IsKind(err, game.NotFound) {
				t.Errorf("deleted ticket: %v", err)
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			if n, _ := tx.CountActiveTickets("cfg"); n != 2 {
				t.Errorf("active after cancel %d", n)
			}
			if mine, _ := tx.ActiveTicketsOfPlayer("p-t1"); len(mine) != 1 || mine[0].ID != "other" {
				t.Errorf("tickets of p-t1 after cancel %v", mine)
			}
			if mine, _ := tx.ActiveTicketsOfPlayer("p-t2"); len(mine) != 1 {
				t.Errorf("tickets of p-t1 after cancel %v", mine)
			}
			return nil
		})
	})
}

func TestMatchmakingMatchesAndLeases(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		Update(t, st, func(tx store.Tx) error {
			return tx.InsertMatch(&game.Match{ID: "m1", ConfigName: "cfg", Status: game.MatchAcceptance, TicketIDs: []string{"a", "b"},
				Answers: map[string]bool{"p": true}, AcceptDeadline: t0.Add(30 * time.Second), CreationTime: t0})
		})
		View(t, st, func(tx store.Tx) error {
			m, err := tx.GetMatch("m1")
			if err != nil || len(m.TicketIDs) != 2 || !m.Answers["p"] {
				t.Fatalf("get %+v %v", m, err)
			}
			if due, _ := tx.ListDueAcceptances("cfg", t0.Add(29*time.Second), 10); len(due) != 0 {
				t.Errorf("due early %v", due)
			}
			if due, _ := tx.ListDueAcceptances("cfg", t0.Add(30*time.Second), 10); len(due) != 1 {
				t.Errorf("not due %v", due)
			}
			return nil
		})
		lease := func(owner string, at time.Time) bool {
			var ok bool
			Update(t, st, func(tx store.Tx) error {
				var err error
				ok, err = tx.LeaseMatchmaker("cfg", owner, at, at.Add(10*time.Second))
				return err
			})
			return ok
		}
		if !lease("n1", t0) || lease("n2", t0.Add(5*time.Second)) || !lease("n1", t0.Add(5*time.Second)) {
			t.Fatal("lease held by n1 should exclude n2 and renew for n1")
		}
		if !lease("n2", t0.Add(15*time.Second)) || lease("n1", t0.Add(16*time.Second)) {
			t.Fatal("an expired lease should pass to n2")
		}
	})
}
