package control

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// TestLostSessionsEnd pins how sessions end when their compute or fleet
// goes: ACTIVATING ends in ERROR, ACTIVE TERMINATED/INTERRUPTED, and
// their player sessions complete.
func TestLostSessionsEnd(t *testing.T) {
	now := time.UnixMilli(1767225600000).UTC()
	s, f := testService(t, &now)
	ctx := context.Background()
	mk := func(token, compute, status string) *game.GameSession {
		gs, _, err := create(s, f, sessionRequest{MaxPlayers: 2, Location: "custom-a", IdempotencyToken: token})
		if err != nil {
			t.Fatal(err)
		}
		gs.ComputeName, gs.Status = compute, status
		if err := s.update(ctx, func(tx store.Tx) error { return tx.UpdateGameSession(gs) }); err != nil {
			t.Fatal(err)
		}
		return gs
	}
	active := mk("a", "c1", game.SessionActive)
	activating := mk("b", "c1", game.SessionActivating)
	elsewhere := mk("c", "c2", game.SessionActive)
	p := game.NewPlayerSession("player", "", s.clock())
	if err := s.reserve(ctx, active.ID, []*game.PlayerSession{p}); err != nil {
		t.Fatal(err)
	}
	if err := s.update(ctx, func(tx store.Tx) error { return s.endComputeSessions(tx, f.ID, "c1") }); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		active.ID:     {game.SessionTerminated, game.ReasonInterrupted},
		activating.ID: {game.SessionError, ""},
		elsewhere.ID:  {game.SessionActive, ""},
	}
	check := func() {
		t.Helper()
		s.view(ctx, func(tx store.Tx) error {
			for id, w := range want {
				gs, err := tx.GetGameSession(id)
				if err != nil || gs.Status != w[0] || gs.StatusReason != w[1] || gs.CurrentPlayerSessionCount != 0 {
					t.Errorf("%s = %+v %v, want %v", id, gs, err, w)
				}
			}
			ps, err := tx.GetPlayerSession(p.ID)
			if err != nil || ps.Status != game.PlayerCompleted {
				t.Errorf("player session = %+v %v", ps, err)
			}
			return nil
		})
	}
	check()
	if err := s.update(ctx, func(tx store.Tx) error { return s.endFleetSessions(tx, f.ID) }); err != nil {
		t.Fatal(err)
	}
	want[elsewhere.ID] = [2]string{game.SessionTerminated, game.ReasonInterrupted}
	check()
}
