package flexmatch

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/store"
)

// startPlacement places a WITH_QUEUE match on the configuration's first
// queue (spec §6.5): placement id = match id, seats = the rule set's
// capacity, the configuration's properties and data, MatchmakerData,
// every matched player seated and their latencies. A missing queue fails
// the match.
func (x *mmTx) startPlacement(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, m *game.Match, ts []*game.MatchTicket) error {
	q, err := x.tx.GetQueue(game.ResourceID(firstOf(c.QueueARNs), "gamesessionqueue"))
	if game.IsKind(err, game.NotFound) {
		return x.fail(c, m, ts, game.TicketFailed)
	}
	if err != nil {
		return err
	}
	var players []game.TicketPlayer
	for _, t := range ts {
		players = append(players, t.Players...)
	}
	data, err := x.s.buildMatchmakerData(c, rs, m.ID, "", players)
	if err != nil {
		return err
	}
	m.Placements++
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	p := &game.Placement{ID: m.PlacementID(), QueueName: q.Name, QueueARN: q.ARN, Status: game.PlacementPending, Properties: c.Properties,
		MaxPlayers: rs.Capacity(), GameSessionData: c.GameSessionData, MatchmakerData: data, StartTime: x.now}
	for _, pl := range players {
		p.DesiredPlayers = append(p.DesiredPlayers, game.DesiredPlayer{PlayerID: pl.ID})
		for loc, ms := range pl.LatencyMs {
			p.Latencies = append(p.Latencies, game.PlayerLatency{PlayerID: pl.ID, Location: loc, LatencyMs: float64(ms)})
		}
	}
	x.wake = true
	return x.s.queues.StartMatchPlacement(x.tx, q, p)
}

func firstOf(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}

// PlacementEnded is called inside the transaction that ends placement p
// (queueing.Matchmaker): when p placed a match, its tickets complete in
// the new session (FULFILLED), time out (TIMED_OUT) or fail. A fulfilled
// match under AUTOMATIC backfill with free slots gets its first backfill
// ticket.
func (s *Service) PlacementEnded(tx store.Tx, p *game.Placement) error {
	if p.MatchmakerData == "" {
		return nil // a match's placement always carries its data
	}
	m, err := tx.GetMatch(game.MatchOfPlacement(p.ID))
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	if err != nil || m.Status != game.MatchPlacing || m.PlacementID() != p.ID {
		return err
	}
	x := &mmTx{s: s, tx: tx, now: s.clock()}
	c, err := tx.GetMatchConfig(m.ConfigName)
	if err != nil {
		return err
	}
	ts, err := x.tickets(m.TicketIDs)
	if err != nil {
		return err
	}
	switch p.Status {
	case game.PlacementTimedOut:
		s.queues.WakePlacer()
		return x.placementTimedOut(c, m, ts)
	case game.PlacementFulfilled:
	case game.PlacementCancelled:
		if x.pastDeadline(ts) {
			return x.fail(c, m, ts, game.TicketTimedOut)
		}
		return x.fail(c, m, ts, game.TicketFailed)
	default:
		return x.fail(c, m, ts, game.TicketFailed)
	}
	seat := map[string]string{}
	for _, pp := range p.PlacedPlayers {
		seat[pp.PlayerID] = pp.PlayerSessionID
	}
	for _, t := range ts {
		for i := range t.Players {
			t.Players[i].PlayerSessionID = seat[t.Players[i].ID]
		}
	}
	gs, err := tx.GetGameSession(p.GameSessionID)
	if err != nil {
		return err
	}
	if err := x.complete(c, m, ts, gs); err != nil {
		return err
	}
	return x.autoBackfill(c, gs)
}

// placementTimedOut places the match again while every ticket is within
// its request timeout (spec §6.5); past the earliest one its tickets end
// TIMED_OUT.
func (x *mmTx) placementTimedOut(c *game.MatchmakingConfiguration, m *game.Match, ts []*game.MatchTicket) error {
	if x.pastDeadline(ts) {
		return x.fail(c, m, ts, game.TicketTimedOut)
	}
	rs, err := x.matchRules(c, m)
	if err != nil {
		return err
	}
	return x.startPlacement(c, rs, m, ts)
}

// pastDeadline reports whether any of ts is past its request timeout.
func (x *mmTx) pastDeadline(ts []*game.MatchTicket) bool {
	for _, t := range ts {
		if !x.now.Before(t.Deadline) {
			return true
		}
	}
	return false
}
