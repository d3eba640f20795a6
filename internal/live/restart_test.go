package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// TestServerRestartRebuildsMemory runs the real server on SQLite, writes
// through its store, and checks that after a restart (memory rebuilt
// from the store) searches and describes answer exactly as before it
// (memory fed commit by commit).
func TestServerRestartRebuildsMemory(t *testing.T) {
	dir := t.TempDir()
	cfg := server.Config{Listen: "127.0.0.1:0", DataDir: dir, Region: apitest.Region, AccountID: "123456789012",
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}}
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fleet := "fleet-" + game.NewUUID()
	// Created now: the activation timeout (300 s) ends none of them during
	// the test.
	start := time.Now().UTC().Truncate(time.Millisecond)
	err = srv.Store().Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertFleet(&game.Fleet{ID: fleet, Status: game.FleetActive, CreationTime: start}); err != nil {
			return err
		}
		for i := range 30 {
			id := fmt.Sprintf("gsess-%02d", i)
			s := &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/" + id, IDString: id, FleetID: fleet,
				Location: []string{"custom-a", "custom-b"}[i%2], CreationTime: start.Add(time.Duration(i%7) * time.Millisecond),
				MaximumPlayerSessionCount: 3, Status: []string{game.SessionActive, game.SessionActivating, game.SessionActive}[i%3],
				PlayerSessionCreationPolicy: game.AcceptAll, Properties: []game.Property{{Key: "mode", Value: []string{"a", "b"}[i%2]}}}
			if err := tx.InsertGameSession(s); err != nil {
				return err
			}
			if s.Status == game.SessionActive && i%4 == 0 {
				// Reserved now: the servers' reservation timeout (60 s)
				// does not end them during the test.
				now := time.Now().UTC().Truncate(time.Millisecond)
				ps := []*game.PlayerSession{{ID: game.NewPlayerSessionID(), PlayerID: "p", CreationTime: now, Status: game.PlayerReserved}}
				if err := tx.ReserveSeats(s.ID, ps, now.Add(-time.Hour)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	answers := func(srv *server.Server) string {
		var out []any
		for _, in := range []*wire.SearchGameSessionsInput{
			{FleetId: &fleet},
			{FleetId: &fleet, FilterExpression: wire.String("hasAvailablePlayerSessions = true AND gameSessionProperties.mode = 'a'")},
			{FleetId: &fleet, SortExpression: wire.String("playerSessionCount DESC"), Limit: wire.Int32(5)},
		} {
			o, err := srv.Sessions().SearchGameSessions(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		for _, in := range []*wire.DescribeGameSessionsInput{
			{FleetId: &fleet},
			{FleetId: &fleet, StatusFilter: wire.String(game.SessionActivating), Limit: wire.Int32(4)},
			{GameSessionId: wire.String("arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/gsess-04")},
		} {
			o, err := srv.Sessions().DescribeGameSessions(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	before := answers(srv)
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err = server.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	if after := answers(srv); after != before {
		t.Errorf("answers changed across a restart:\nbefore %s\nafter  %s", before, after)
	}
}
