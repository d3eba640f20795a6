package flexmatch

import (
	"context"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/wire"
)

// AcceptMatch records players' answers to a proposed match. A REJECT ends
// the acceptance at once; the last ACCEPT moves the match on. NotFound for
// an unknown ticket; InvalidRequest for a ticket not awaiting acceptance
// or a player not on the ticket.
func (s *Service) AcceptMatch(ctx context.Context, in *wire.AcceptMatchInput) (*wire.AcceptMatchOutput, error) {
	accept := wire.Deref(in.AcceptanceType) == "ACCEPT"
	if len(in.PlayerIds) == 0 {
		return nil, game.Errorf(game.InvalidRequest, "PlayerIds must name at least one player")
	}
	err := s.mmUpdate(ctx, func(x *mmTx) error {
		t, err := x.tx.GetTicket(wire.Deref(in.TicketId))
		if err != nil {
			return err
		}
		if t.Status != game.TicketRequiresAcceptance {
			return game.Errorf(game.InvalidRequest, "matchmaking ticket %s is %s, not REQUIRES_ACCEPTANCE", t.ID, t.Status)
		}
		for _, id := range in.PlayerIds {
			if !slices.ContainsFunc(t.Players, func(p game.TicketPlayer) bool { return p.ID == id }) {
				return game.Errorf(game.InvalidRequest, "player %s is not on matchmaking ticket %s", id, t.ID)
			}
		}
		return x.answer(t, in.PlayerIds, accept)
	})
	if err != nil {
		return nil, err
	}
	return &wire.AcceptMatchOutput{}, nil
}

// answer records the players' answer on t's match and ends or advances
// the acceptance when it can.
func (x *mmTx) answer(t *game.MatchTicket, players []string, accept bool) error {
	m, err := x.tx.GetMatch(t.MatchID)
	if err != nil {
		return err
	}
	c, err := x.tx.GetMatchConfig(m.ConfigName)
	if err != nil {
		return err
	}
	if m.Answers == nil {
		m.Answers = map[string]bool{}
	}
	for _, id := range players {
		if prev, ok := m.Answers[id]; !ok || prev {
			m.Answers[id] = accept // a REJECT after an ACCEPT counts
		}
	}
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	ts, err := x.tickets(m.TicketIDs)
	if err != nil {
		return err
	}
	if err := x.s.publishMatch(x.tx, c, newMatchDetail(evAcceptMatch, c, m, ts)); err != nil {
		return err
	}
	if !accept {
		return x.endAcceptance(c, m, "Rejected", nil)
	}
	for _, tk := range ts {
		for _, p := range tk.Players {
			if !tk.Backfill && !m.Answers[p.ID] {
				return nil
			}
		}
	}
	d := newMatchDetail(evAcceptCompleted, c, m, ts)
	d.Acceptance = "Accepted"
	if err := x.s.publishMatch(x.tx, c, d); err != nil {
		return err
	}
	rs, err := x.matchRules(c, m)
	if err != nil {
		return err
	}
	return x.proceed(c, rs, m, ts)
}

// propose claims the tickets of a match the matcher found: only if every
// one of them is still SEARCHING (read locked), so a ticket is never in
// two matches even with matchmakers on several nodes. It answers false
// when the match was given up.
func (x *mmTx) propose(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, fm matchmaking.Match) (bool, error) {
	ids := make([]string, len(fm.Tickets))
	for i, p := range fm.Tickets {
		ids[i] = p.TicketID
	}
	ts, err := x.tickets(ids)
	if err != nil {
		return false, err
	}
	m := &game.Match{ID: game.NewUUID(), ConfigName: c.Name, Status: game.MatchPlacing, TicketIDs: ids, Locations: fm.Locations, RuleSetName: c.RuleSetName,
		AcceptanceRequired: c.AcceptanceRequired, AcceptanceTimeoutSeconds: c.AcceptanceTimeoutSeconds, CreationTime: x.now}
	for i, t := range ts {
		if t.Status != game.TicketSearching {
			return false, nil
		}
		t.MatchID = m.ID
		if t.Backfill {
			m.GameSessionARN = t.GameSessionARN
			continue
		}
		for j := range t.Players {
			t.Players[j].Team = fm.Tickets[i].Team
		}
	}
	d := newMatchDetail(evPotentialMatch, c, m, ts)
	d.AcceptanceRequired = &m.AcceptanceRequired
	if m.AcceptanceRequired {
		d.AcceptanceTimeout = &m.AcceptanceTimeoutSeconds
	}
	d.RuleEvaluation = passedMetrics(rs)
	if err := x.s.publishMatch(x.tx, c, d); err != nil {
		return false, err
	}
	if !m.AcceptanceRequired {
		if err := x.tx.InsertMatch(m); err != nil {
			return false, err
		}
		return true, x.proceed(c, rs, m, ts)
	}
	m.Status, m.AcceptDeadline = game.MatchAcceptance, x.now.Add(time.Duration(m.AcceptanceTimeoutSeconds)*time.Second)
	if err := x.tx.InsertMatch(m); err != nil {
		return false, err
	}
	for _, t := range ts {
		if err := x.setStatus(t, game.TicketRequiresAcceptance, "", ""); err != nil {
			return false, err
		}
	}
	return true, nil
}

// passedMetrics reports every rule passed once: the match passed them all.
func passedMetrics(rs *ruleset.RuleSet) []ruleMetric {
	out := make([]ruleMetric, 0, len(rs.Rules))
	for _, r := range rs.Rules {
		out = append(out, ruleMetric{RuleName: r.Name, PassedCount: 1})
	}
	return out
}

// proceed moves an accepted (or not acceptance-requiring) match on:
// STANDALONE completes it, a backfill match fills its game session, and
// WITH_QUEUE starts its placement.
func (x *mmTx) proceed(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, m *game.Match, ts []*game.MatchTicket) error {
	switch {
	case m.GameSessionARN != "":
		return x.fillBackfill(c, rs, m, ts)
	case c.FlexMatchMode == game.FlexMatchStandalone:
		return x.complete(c, m, ts, nil)
	}
	m.Status = game.MatchPlacing
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	for _, t := range ts {
		if err := x.setStatus(t, game.TicketPlacing, "", ""); err != nil {
			return err
		}
	}
	return x.startPlacement(c, rs, m, ts)
}

// complete ends the match's tickets COMPLETED, in game session p's
// session when given, and publishes MatchmakingSucceeded.
func (x *mmTx) complete(c *game.MatchmakingConfiguration, m *game.Match, ts []*game.MatchTicket, gs *game.GameSession) error {
	m.Status = game.MatchDone
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	for _, t := range ts {
		if gs != nil {
			t.GameSessionARN, t.IPAddress, t.DNSName, t.Port = gs.ID, gs.IPAddress, gs.DNSName, gs.Port
		}
		if err := x.setStatus(t, game.TicketCompleted, "", ""); err != nil {
			return err
		}
	}
	d := newMatchDetail(evSucceeded, c, m, ts)
	if gs != nil {
		d.GameSessionInfo.GameSessionARN, d.GameSessionInfo.IPAddress, d.GameSessionInfo.Port = gs.ID, gs.IPAddress, gs.Port
		d.GameSessionInfo.PlayerGatewayStatus = "DISABLED"
	}
	return x.s.publishMatch(x.tx, c, d)
}

// fail ends the match's tickets FAILED (or TIMED_OUT) with one event each.
func (x *mmTx) fail(c *game.MatchmakingConfiguration, m *game.Match, ts []*game.MatchTicket, status string) error {
	m.Status = game.MatchDone
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	reason, msg, ev := "UNEXPECTED_ERROR", "An unexpected error was encountered during match placing.", evFailed
	if status == game.TicketTimedOut {
		reason, msg, ev = "TIMED_OUT", "Removed from matchmaking due to timing out.", evTimedOut
	}
	for _, t := range ts {
		if err := x.setStatus(t, status, reason, msg); err != nil {
			return err
		}
	}
	return x.s.publishEach(x.tx, c, ev, m, ts)
}
