package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func players(at time.Time, ids ...string) []*game.PlayerSession {
	var out []*game.PlayerSession
	for _, id := range ids {
		out = append(out, &game.PlayerSession{ID: "psess-" + id, PlayerID: "player-" + id, CreationTime: at, Status: game.PlayerReserved})
	}
	return out
}

func seats(t *testing.T, st store.Store, id string) int {
	t.Helper()
	var n int
	View(t, st, func(tx store.Tx) error {
		s, err := tx.GetGameSession(id)
		n = s.CurrentPlayerSessionCount
		return err
	})
	return n
}

func TestPlayerSessions(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		gs := session(0)
		never := t0.Add(-time.Hour)
		Update(t, st, func(tx store.Tx) error { return tx.InsertGameSession(gs) })
		Update(t, st, func(tx store.Tx) error { return tx.ReserveSeats(gs.ID, players(t0, "a", "b", "c"), never) })
		err := st.Update(t.Context(), func(tx store.Tx) error { return tx.ReserveSeats(gs.ID, players(t0, "d", "e"), never) })
		if !game.IsKind(err, game.GameSessionFull) {
			t.Fatalf("over the cap: %v, want GameSessionFull", err)
		}
		if n := seats(t, st, gs.ID); n != 3 {
			t.Fatalf("seats after refused batch = %d, want 3 (all or nothing)", n)
		}
		err = st.Update(t.Context(), func(tx store.Tx) error { return tx.ReserveSeats("arn:nope", players(t0, "x"), never) })
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("unknown session: %v", err)
		}
		Update(t, st, func(tx store.Tx) error {
			p, err := tx.SetPlayerSessionStatus("psess-a", game.PlayerActive, t0)
			if err != nil || p.Port != 7777 || p.FleetID != "fleet-a" || p.IPAddress != "10.0.0.1" {
				t.Errorf("accepted: %+v %v", p, err)
			}
			p, err = tx.SetPlayerSessionStatus("psess-b", game.PlayerCompleted, t0.Add(time.Second))
			if err != nil || !p.TerminationTime.Equal(t0.Add(time.Second)) {
				t.Errorf("completed: %+v %v", p, err)
			}
			return err
		})
		if n := seats(t, st, gs.ID); n != 2 {
			t.Fatalf("seats = %d, want 2", n)
		}
		// c is still RESERVED: expiring at t0 frees its seat inside ReserveSeats.
		Update(t, st, func(tx store.Tx) error {
			return tx.ReserveSeats(gs.ID, players(t0.Add(time.Minute), "d", "e", "f"), t0)
		})
		View(t, st, func(tx store.Tx) error {
			p, err := tx.GetPlayerSession("psess-c")
			if err != nil || p.Status != game.PlayerTimedOut {
				t.Errorf("c = %+v %v, want TIMEDOUT", p, err)
			}
			list, _, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: gs.ID, Status: game.PlayerReserved}, store.Page{})
			if err != nil || len(list) != 3 {
				t.Errorf("reserved: %d %v", len(list), err)
			}
			list, next, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: gs.ID}, store.Page{Limit: 4})
			if err != nil || len(list) != 4 || next == "" {
				t.Fatalf("page 1: %d %q %v", len(list), next, err)
			}
			list, next, err = tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: gs.ID}, store.Page{Limit: 4, Token: next})
			if err != nil || len(list) != 2 || next != "" {
				t.Errorf("page 2: %d %q %v", len(list), next, err)
			}
			list, _, err = tx.ListPlayerSessions(store.PlayerFilter{PlayerID: "player-d"}, store.Page{})
			if err != nil || len(list) != 1 {
				t.Errorf("by player: %d %v", len(list), err)
			}
			return nil
		})
		if n := seats(t, st, gs.ID); n != 4 {
			t.Fatalf("seats = %d, want 4", n)
		}
		Update(t, st, func(tx store.Tx) error {
			n, err := tx.ExpireReservations(t0.Add(time.Minute), t0.Add(2*time.Minute), 2)
			if n != 2 {
				t.Errorf("expired %d, want 2 (the batch)", n)
			}
			return err
		})
		if n := seats(t, st, gs.ID); n != 2 {
			t.Fatalf("seats after expiry = %d, want 2", n)
		}
		Update(t, st, func(tx store.Tx) error { return tx.EndPlayerSessions(gs.ID, t0.Add(3*time.Minute)) })
		if n := seats(t, st, gs.ID); n != 0 {
			t.Fatalf("seats after end = %d, want 0", n)
		}
		View(t, st, func(tx store.Tx) error {
			p, err := tx.GetPlayerSession("psess-a")
			if err != nil || p.Status != game.PlayerCompleted || p.TerminationTime.IsZero() {
				t.Errorf("a after end: %+v %v", p, err)
			}
			return nil
		})
	})
}

// A change of a player session's status after a read of it in the same
// transaction starts from the record as it is then: here the read is
// followed by the reservation's expiry, which SetPlayerSessionStatus must
// see (the seat was already given back), not the record read before it.
func TestPlayerStatusAfterReadAndChange(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		gs := session(0)
		never := t0.Add(-time.Hour)
		Update(t, st, func(tx store.Tx) error { return tx.InsertGameSession(gs) })
		Update(t, st, func(tx store.Tx) error { return tx.ReserveSeats(gs.ID, players(t0, "a", "b"), never) })
		Update(t, st, func(tx store.Tx) error {
			p, err := tx.GetPlayerSession("psess-a")
			if err != nil || p.Status != game.PlayerReserved {
				t.Fatalf("read: %+v %v", p, err)
			}
			if _, err := tx.ExpireReservations(t0, t0.Add(time.Minute), 1); err != nil {
				return err
			}
			p, err = tx.SetPlayerSessionStatus("psess-a", game.PlayerCompleted, t0.Add(2*time.Minute))
			if err != nil {
				return err
			}
			// Read, then changed with nothing between: the read is reused.
			if _, err := tx.GetPlayerSession("psess-b"); err != nil {
				return err
			}
			p, err = tx.SetPlayerSessionStatus("psess-b", game.PlayerActive, t0.Add(2*time.Minute))
			if err != nil || p.Status != game.PlayerActive || p.PlayerID != "player-b" || p.GameSessionID != gs.ID {
				t.Errorf("accepted after a read: %+v %v", p, err)
			}
			return err
		})
		// a's seat went back once (at its expiry, not again when it
		// completed); b still holds its own.
		if n := seats(t, st, gs.ID); n != 1 {
			t.Fatalf("seats = %d, want 1", n)
		}
		View(t, st, func(tx store.Tx) error {
			p, err := tx.GetPlayerSession("psess-b")
			if err != nil || p.Status != game.PlayerActive {
				t.Errorf("b = %+v %v, want ACTIVE", p, err)
			}
			return nil
		})
	})
}
