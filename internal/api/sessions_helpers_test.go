package api_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

const (
	seedFleetID = "fleet-11111111-2222-3333-4444-555555555555"
	seedLoc     = "custom-home"
)

// testClock is a settable clock for the server.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// withClock makes the server read the time from c.
func withClock(c *testClock) apitest.Option { return func(cfg *server.Config) { cfg.Now = c.Now } }

// seedFleetAndLocation stores an ACTIVE Anywhere fleet in seedLoc.
func seedFleetAndLocation(t *testing.T, env *apitest.Env) {
	t.Helper()
	err := env.Server.Store().Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertLocation(&game.Location{Name: seedLoc, ARN: "arn:aws:gamelift:us-west-2:123456789012:location/" + seedLoc}); err != nil {
			return err
		}
		return tx.InsertFleet(&game.Fleet{ID: seedFleetID, ARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/" + seedFleetID,
			Status: game.FleetActive, ComputeType: "ANYWHERE", Locations: []string{seedLoc}, CreationTime: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedSession stores a game session in status with maxPlayers seats,
// created at created, and returns its ARN.
func seedSession(t *testing.T, env *apitest.Env, idString, status string, maxPlayers int, created time.Time) string {
	t.Helper()
	gs := &game.GameSession{
		ID:       game.Account{Region: apitest.Region}.GameSessionARN(seedFleetID, seedLoc, idString),
		IDString: idString, Name: "s-" + idString, FleetID: seedFleetID,
		FleetARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/" + seedFleetID, Location: seedLoc, ComputeName: "compute-1",
		CreationTime: created.UTC().Truncate(time.Millisecond), MaximumPlayerSessionCount: maxPlayers, Status: status,
		PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.NoProtection,
		IPAddress: "192.0.2.10", DNSName: "host.example", Port: 7777,
		Properties: []game.Property{{Key: "mode", Value: "ctf"}},
	}
	if err := env.Server.Store().Update(context.Background(), func(tx store.Tx) error { return tx.InsertGameSession(gs) }); err != nil {
		t.Fatal(err)
	}
	return gs.ID
}
