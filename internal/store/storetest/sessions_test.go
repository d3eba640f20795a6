package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

var t0 = time.UnixMilli(1767225600000).UTC()

// session returns an ACTIVE session of fleet-a in custom-a, created at
// t0 + i ms.
func session(i int) *game.GameSession {
	id := fmt.Sprintf("gsess-%03d", i)
	return &game.GameSession{
		ID: "arn:aws:gamelift:us-west-2::gamesession/fleet-a/custom-a/" + id, IDString: id,
		FleetID: "fleet-a", FleetARN: "arn:fleet-a", Location: "custom-a", ComputeName: "c1",
		CreationTime: t0.Add(time.Duration(i) * time.Millisecond), MaximumPlayerSessionCount: 4,
		Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll,
		IPAddress: "10.0.0.1", Port: 7777, CreatorID: "creator",
		Properties: []game.Property{{Key: "mode", Value: "ctf"}},
	}
}

func TestGameSessions(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		Update(t, st, func(tx store.Tx) error {
			for i := 0; i < 5; i++ {
				s := session(i)
				if i == 4 {
					s.Location, s.Status, s.ComputeName = "custom-b", game.SessionActivating, "c2"
				}
				if err := tx.InsertGameSession(s); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error { return tx.InsertGameSession(session(0)) })
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate id string: %v, want Conflict", err)
		}
		Update(t, st, func(tx store.Tx) error {
			s, err := tx.FindGameSession("fleet-a", "gsess-001")
			if err != nil {
				return err
			}
			s.Name, s.MaximumPlayerSessionCount, s.CurrentPlayerSessionCount = "renamed", 8, 99
			s.Properties = append(s.Properties, game.Property{Key: "map", Value: "dust"})
			return tx.UpdateGameSession(s)
		})
		View(t, st, func(tx store.Tx) error {
			s, err := tx.GetGameSession(session(1).ID)
			if err != nil {
				return err
			}
			if s.Name != "renamed" || s.MaximumPlayerSessionCount != 8 || s.CurrentPlayerSessionCount != 0 || len(s.Properties) != 2 {
				t.Errorf("after update: %+v (the seat count is not written by UpdateGameSession)", s)
			}
			if _, err := tx.FindGameSession("fleet-b", "gsess-001"); !game.IsKind(err, game.NotFound) {
				t.Errorf("FindGameSession in another fleet: %v", err)
			}
			var seen []string
			token := ""
			for {
				list, next, err := tx.ListGameSessions(store.SessionFilter{FleetID: "fleet-a"}, store.Page{Limit: 2, Token: token})
				if err != nil {
					return err
				}
				for _, s := range list {
					seen = append(seen, s.IDString)
				}
				if next == "" {
					break
				}
				if next == token {
					t.Fatal("token repeated")
				}
				token = next
			}
			if fmt.Sprint(seen) != "[gsess-000 gsess-001 gsess-002 gsess-003 gsess-004]" {
				t.Errorf("paged list = %v", seen)
			}
			list, _, err := tx.ListGameSessions(store.SessionFilter{FleetID: "fleet-a", Location: "custom-a", Status: game.SessionActive}, store.Page{})
			if err != nil || len(list) != 4 {
				t.Errorf("filtered list: %d sessions, %v", len(list), err)
			}
			list, _, err = tx.ListGameSessions(store.SessionFilter{ID: session(4).ID}, store.Page{})
			if err != nil || len(list) != 1 || list[0].Location != "custom-b" {
				t.Errorf("by id: %v %v", list, err)
			}
			live, err := tx.LiveGameSessions("fleet-a", "c2")
			if err != nil || len(live) != 1 {
				t.Errorf("live on c2: %v %v", live, err)
			}
			n, err := tx.CountCreatorSessions("fleet-a", "creator", t0.Add(3*time.Millisecond))
			if err != nil || n != 2 {
				t.Errorf("creator count = %d, %v; want 2", n, err)
			}
			usage, err := tx.FleetUsage("fleet-a")
			if err != nil || len(usage) != 2 || usage[0].ActiveGameSessions != 4 || usage[0].MaximumPlayers != 20 || usage[1].LiveGameSessions != 1 {
				t.Errorf("usage = %+v, %v", usage, err)
			}
			return nil
		})
	})
}
