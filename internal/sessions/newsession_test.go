package sessions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// testService is a Service on a fresh SQLite store whose clock is *now,
// with one ACTIVE Anywhere fleet in custom-a.
func testService(t *testing.T, now *time.Time) (*Service, *game.Fleet) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newService(st, func() time.Time { return *now })
	f := &game.Fleet{ID: "fleet-1", ARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1", Status: game.FleetActive,
		ComputeType: "ANYWHERE", Locations: []string{"custom-a"}, NewGameSessionProtectionPolicy: game.FullProtection}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.InsertFleet(f) }); err != nil {
		t.Fatal(err)
	}
	return s, f
}

// create runs newGameSession and inserts the result unless it is a replay.
func create(s *Service, f *game.Fleet, r sessionRequest) (gs *game.GameSession, replay bool, err error) {
	err = s.update(context.Background(), func(tx store.Tx) error {
		gs, replay, err = s.newGameSession(tx, f, r)
		if err != nil || replay {
			return err
		}
		return tx.InsertGameSession(gs)
	})
	return gs, replay, err
}

func TestNewGameSessionRecord(t *testing.T) {
	now := time.UnixMilli(1767225600000).UTC()
	s, f := testService(t, &now)
	gs, replay, err := create(s, f, sessionRequest{Name: "n", MaxPlayers: 4, Location: "custom-a"})
	if err != nil || replay {
		t.Fatal(err, replay)
	}
	if !strings.HasPrefix(gs.ID, "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/gsess-") || gs.IDString != gs.ID[strings.LastIndex(gs.ID, "/")+1:] {
		t.Errorf("ARN = %q, id string %q", gs.ID, gs.IDString)
	}
	if gs.Status != game.SessionActivating || gs.PlayerSessionCreationPolicy != game.AcceptAll ||
		gs.ProtectionPolicy != game.FullProtection || gs.FleetARN != f.ARN || !gs.CreationTime.Equal(now) {
		t.Errorf("record = %+v", gs)
	}
	first, _, err := create(s, f, sessionRequest{MaxPlayers: 2, Location: "custom-a", IdempotencyToken: "tok-1"})
	if err != nil || first.ID != "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/tok-1" {
		t.Fatalf("token session %v %v", first, err)
	}
	again, replay, err := create(s, f, sessionRequest{MaxPlayers: 9, Location: "custom-a", IdempotencyToken: "tok-1", Name: "other"})
	if err != nil || !replay || again.ID != first.ID || again.MaximumPlayerSessionCount != 2 {
		t.Errorf("replay = %+v %v %v, want the original", again, replay, err)
	}
	if _, _, err := create(s, f, sessionRequest{MaxPlayers: 2, Location: "custom-a", GameSessionID: "custom-1"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		r    sessionRequest
		kind game.Kind
	}{
		{"seats above the cap", sessionRequest{MaxPlayers: 201, Location: "custom-a"}, game.InvalidRequest},
		{"foreign location", sessionRequest{MaxPlayers: 1, Location: "custom-z"}, game.InvalidRequest},
		{"deprecated id taken", sessionRequest{MaxPlayers: 1, Location: "custom-a", GameSessionID: "custom-1"}, game.IdempotentParameterMismatch},
	}
	for _, c := range cases {
		if _, _, err := create(s, f, c.r); !game.IsKind(err, c.kind) {
			t.Errorf("%s: %v, want kind %d", c.name, err, c.kind)
		}
	}
	// No location: the fleet's only one; with two, no guess.
	if gs, _, err := create(s, f, sessionRequest{MaxPlayers: 1}); err != nil || gs.Location != "custom-a" ||
		!strings.Contains(gs.ID, "/fleet-1/custom-a/") {
		t.Errorf("no location on a one-location fleet: %+v %v", gs, err)
	}
	two := *f
	two.Locations = []string{"custom-a", "custom-b"}
	if _, _, err := create(s, &two, sessionRequest{MaxPlayers: 1}); !game.IsKind(err, game.InvalidRequest) ||
		!strings.Contains(err.Error(), "Location is required") {
		t.Errorf("no location on a two-location fleet: %v", err)
	}
	f.Status = game.FleetDeleting
	if _, _, err := create(s, f, sessionRequest{MaxPlayers: 1, Location: "custom-a"}); !game.IsKind(err, game.InvalidFleetStatus) {
		t.Errorf("fleet not active: %v", err)
	}
}

func TestNewGameSessionCreatorLimits(t *testing.T) {
	now := time.UnixMilli(1767225600000).UTC()
	s, f := testService(t, &now)
	r := sessionRequest{MaxPlayers: 1, Location: "custom-a", CreatorID: "alice"}
	if _, _, err := create(s, f, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := create(s, f, r); !game.IsKind(err, game.LimitExceeded) {
		t.Errorf("second in the same second without a policy: %v, want LimitExceeded", err)
	}
	now = now.Add(time.Second)
	if _, _, err := create(s, f, r); err != nil {
		t.Errorf("a second later: %v", err)
	}

	f.CreationLimit = game.CreationLimit{NewGameSessionsPerCreator: 2, PolicyPeriodInMinutes: 5}
	if _, _, err := create(s, f, sessionRequest{MaxPlayers: 1, Location: "custom-a"}); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("policy without CreatorId: %v, want InvalidRequest", err)
	}
	now = now.Add(time.Minute)
	if _, _, err := create(s, f, r); !game.IsKind(err, game.LimitExceeded) {
		t.Errorf("third in 5 minutes: %v, want LimitExceeded", err)
	}
	if _, _, err := create(s, f, sessionRequest{MaxPlayers: 1, Location: "custom-a", CreatorID: "bob"}); err != nil {
		t.Errorf("another creator: %v", err)
	}
	now = now.Add(4 * time.Minute)
	if _, _, err := create(s, f, r); err != nil {
		t.Errorf("after the first fell out of the period: %v", err)
	}
}
