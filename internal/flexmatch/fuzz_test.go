package flexmatch

import (
	"encoding/json"
	"testing"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/wire"
)

// FuzzMatchmakerData feeds arbitrary game session MatchmakerData to the
// backfill path's reader: it must never panic, and what it accepts must
// render again.
func FuzzMatchmakerData(f *testing.F) {
	f.Add(`{"matchId":"m","matchmakingConfigurationArn":"arn:aws:gamelift:us-west-2:123456789012:matchmakingconfiguration/c","teams":[{"name":"red","players":[{"playerId":"p1","attributes":{"skill":{"attributeType":"DOUBLE","valueAttribute":23.0}}}]}],"autoBackfillTicketId":null,"autoBackfillMode":"MANUAL"}`)
	f.Add(`{"matchId":"m","teams":[{"name":"red","players":[{"playerId":"p","attributes":{"a":{"attributeType":"STRING_LIST","valueAttribute":["x"]},"b":{"attributeType":"STRING_DOUBLE_MAP","valueAttribute":{"k":1}},"c":{"attributeType":"STRING","valueAttribute":3}}}]}]}`)
	f.Add(`{"matchId":1}`)
	f.Add(``)
	rs, err := ruleset.Parse(duelRules)
	if err != nil {
		f.Fatal(err)
	}
	s := New(nil, nil, nil, Config{}, nil, nil)
	f.Fuzz(func(t *testing.T, raw string) {
		d, ok := readMatchmakerData(raw)
		if !ok {
			return
		}
		var players []game.TicketPlayer
		for _, team := range d.Teams {
			for _, p := range team.Players {
				players = append(players, game.TicketPlayer{ID: p.PlayerID, Team: team.Name, Attributes: attributesFromData(p.Attributes)})
			}
		}
		c := &game.MatchmakingConfiguration{Name: "c", BackfillMode: game.BackfillManual}
		out, err := s.buildMatchmakerData(c, rs, d.MatchID, "", players)
		if err != nil {
			return // an attribute that is not one value kind is refused, not rendered
		}
		if _, ok := readMatchmakerData(out); !ok {
			t.Fatalf("rendered data does not read back: %s", out)
		}
	})
}

// FuzzTicketPlayers feeds arbitrary StartMatchmaking players (as JSON)
// to the ticket builder: an error or a ticket, never a panic, and every
// player of a ticket is named once.
func FuzzTicketPlayers(f *testing.F) {
	f.Add(`[{"PlayerId":"p1","PlayerAttributes":{"skill":{"N":3}},"LatencyInMs":{"us-west-2":20}}]`, false)
	f.Add(`[{"PlayerId":"p1","Team":"red","PlayerAttributes":{"skill":{"S":"x","N":1}}}]`, true)
	f.Add(`[{"PlayerId":"p1"},{"PlayerId":"p1"}]`, false)
	f.Add(`[{}]`, true)
	rs, err := ruleset.Parse(duelRules)
	if err != nil {
		f.Fatal(err)
	}
	s := New(nil, nil, nil, Config{}, nil, nil)
	c := &game.MatchmakingConfiguration{Name: "c", RequestTimeoutSeconds: 10}
	f.Fuzz(func(t *testing.T, raw string, backfill bool) {
		var in []wire.Player
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		tk, err := s.newTicket(c, rs, "t", in, backfill)
		if err != nil {
			if _, ok := err.(*game.Error); !ok {
				t.Fatalf("error %T %v is not a game error", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range tk.Players {
			if p.ID == "" || seen[p.ID] {
				t.Fatalf("players %+v", tk.Players)
			}
			seen[p.ID] = true
			if _, err := poolTicket(tk); err != nil {
				t.Fatalf("accepted ticket does not reach the pool: %v", err)
			}
		}
	})
}
