package storetestenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// SeedActiveSessions writes into the embedded store in dir, before a
// server opens it, the custom location, an Anywhere fleet there with
// acct's ARNs, and n ACTIVE game sessions of seats seats each; it
// returns the fleet's id and the sessions' ids.
func SeedActiveSessions(t testing.TB, dir string, acct game.Account, location string, n, seats int) (fleetID string, ids []string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Millisecond)
	f := &game.Fleet{ID: game.NewFleetID(), Name: "seeded", Status: game.FleetActive, ComputeType: "ANYWHERE",
		Locations: []string{location}, CreationTime: now}
	f.ARN = acct.FleetARN(f.ID)
	err = st.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertLocation(&game.Location{Name: location, ARN: acct.LocationARN(location), CreationTime: now}); err != nil {
			return err
		}
		if err := tx.InsertFleet(f); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			idString := fmt.Sprintf("gsess-seeded-%d", i)
			gs := &game.GameSession{ID: acct.GameSessionARN(f.ID, location, idString), IDString: idString,
				FleetID: f.ID, FleetARN: f.ARN, Location: location, CreationTime: now, MaximumPlayerSessionCount: seats,
				Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.NoProtection}
			if err := tx.InsertGameSession(gs); err != nil {
				return err
			}
			ids = append(ids, gs.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f.ID, ids
}
