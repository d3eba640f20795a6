package processes

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// testAccount is the account of the tests' services.
var testAccount = game.Account{Region: "us-west-2", ID: "123456789012"}

// testService is a Service on a fresh SQLite store whose clock is *now,
// beside the rest of the control plane, with one ACTIVE Anywhere fleet in
// custom-a.
func testService(t *testing.T, now *time.Time) (*Service, *game.Fleet) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newNode(st, control.Config{Account: testAccount}, func() time.Time { return *now }).Service
	f := &game.Fleet{ID: "fleet-1", ARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1", Status: game.FleetActive,
		ComputeType: "ANYWHERE", Locations: []string{"custom-a"}, NewGameSessionProtectionPolicy: game.FullProtection}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.InsertFleet(f) }); err != nil {
		t.Fatal(err)
	}
	return s, f
}

// TestLostSessionsEnd pins how sessions end when their compute or fleet
// goes: ACTIVATING ends in ERROR, ACTIVE TERMINATED/INTERRUPTED, and
// their player sessions complete.
func TestLostSessionsEnd(t *testing.T) {
	now := time.UnixMilli(1767225600000).UTC()
	s, f := testService(t, &now)
	ctx := context.Background()
	mk := func(token, compute, status string) *game.GameSession {
		gs := &game.GameSession{ID: testAccount.GameSessionARN(f.ID, "custom-a", token), IDString: token,
			FleetID: f.ID, FleetARN: f.ARN, Location: "custom-a", CreationTime: now, MaximumPlayerSessionCount: 2,
			Status: status, PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.FullProtection, ComputeName: compute}
		if err := s.update(ctx, func(tx store.Tx) error { return tx.InsertGameSession(gs) }); err != nil {
			t.Fatal(err)
		}
		return gs
	}
	active := mk("a", "c1", game.SessionActive)
	activating := mk("b", "c1", game.SessionActivating)
	elsewhere := mk("c", "c2", game.SessionActive)
	p := game.NewPlayerSession("player", "", s.clock())
	reserve := func(tx store.Tx) error {
		return tx.ReserveSeats(active.ID, []*game.PlayerSession{p}, p.CreationTime.Add(-s.cfg.ReservationTimeout))
	}
	if err := s.update(ctx, reserve); err != nil {
		t.Fatal(err)
	}
	if err := s.update(ctx, func(tx store.Tx) error { return s.EndComputeSessions(tx, f.ID, "c1") }); err != nil {
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
	if err := s.update(ctx, func(tx store.Tx) error { return s.EndFleetSessions(tx, f.ID) }); err != nil {
		t.Fatal(err)
	}
	want[elsewhere.ID] = [2]string{game.SessionTerminated, game.ReasonInterrupted}
	check()
}
