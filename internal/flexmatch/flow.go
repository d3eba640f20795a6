package flexmatch

import (
	"context"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/store"
)

// mmTx is one matchmaking transaction: the store transaction and what to
// do once it commits (pushes to game servers, waking the placer). fn may
// run more than once, so effects wait for the commit.
type mmTx struct {
	s      *Service
	tx     store.Tx
	now    time.Time
	pushes []func()
	wake   bool
}

// mmUpdate runs fn in a transaction and applies its effects after commit.
func (s *Service) mmUpdate(ctx context.Context, fn func(x *mmTx) error) error {
	var x *mmTx
	err := s.update(ctx, func(tx store.Tx) error {
		x = &mmTx{s: s, tx: tx, now: s.clock()}
		return fn(x)
	})
	if err != nil {
		return err
	}
	for _, p := range x.pushes {
		p()
	}
	if x.wake {
		s.queues.WakePlacer()
	}
	return nil
}

// setStatus moves t to status with a reason, ending it when terminal.
func (x *mmTx) setStatus(t *game.MatchTicket, status, reason, msg string) error {
	t.Status, t.StatusReason, t.StatusMessage = status, reason, msg
	if !t.Active() {
		t.EndTime = x.now
	}
	return x.tx.UpdateTicket(t)
}

// tickets loads (and locks) tickets by id, answered in the order given.
// Locks are taken in id order, so two nodes locking overlapping sets
// cannot deadlock each other.
func (x *mmTx) tickets(ids []string) ([]*game.MatchTicket, error) {
	sorted := slices.Sorted(slices.Values(ids))
	byID := make(map[string]*game.MatchTicket, len(ids))
	for _, id := range sorted {
		t, err := x.tx.GetTicket(id)
		if err != nil {
			return nil, err
		}
		byID[id] = t
	}
	out := make([]*game.MatchTicket, 0, len(ids))
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out, nil
}

// rules loads configuration c's rule set.
func (x *mmTx) rules(c *game.MatchmakingConfiguration) (*ruleset.RuleSet, error) {
	rec, err := x.tx.GetRuleSet(c.RuleSetName)
	if err != nil {
		return nil, err
	}
	return rulesOf(rec.Body)
}

// matchRules loads the rule set match m was proposed under (a later
// configuration update does not change a proposed match).
func (x *mmTx) matchRules(c *game.MatchmakingConfiguration, m *game.Match) (*ruleset.RuleSet, error) {
	if m.RuleSetName == "" || m.RuleSetName == c.RuleSetName {
		return x.rules(c)
	}
	rec, err := x.tx.GetRuleSet(m.RuleSetName)
	if game.IsKind(err, game.NotFound) {
		return x.rules(c) // deleted since: the configuration's own
	}
	if err != nil {
		return nil, err
	}
	return rulesOf(rec.Body)
}

// cancelTicket cancels an active ticket: one awaiting acceptance drops its
// proposed match (the others return to the pool); a backfill ticket tells
// its game server BACKFILL_CANCELLED.
func (s *Service) cancelTicket(x *mmTx, id, reason, msg string) error {
	t, err := x.tx.GetTicket(id)
	if err != nil {
		return err
	}
	c, err := x.tx.GetMatchConfig(t.ConfigName)
	if err != nil {
		return err
	}
	if t.Status == game.TicketRequiresAcceptance {
		m, err := x.tx.GetMatch(t.MatchID)
		if err != nil {
			return err
		}
		return x.endAcceptance(c, m, "Rejected", map[string][2]string{t.ID: {reason, msg}})
	}
	if err := x.setStatus(t, game.TicketCancelled, reason, msg); err != nil {
		return err
	}
	x.backfillEnded(t, "BACKFILL_CANCELLED")
	return x.s.publishEach(x.tx, c, evCancelled, nil, []*game.MatchTicket{t})
}

// endAcceptance closes m's acceptance window without a full accept
// (acceptance "Rejected" or "TimedOut"): tickets with a rejecting or (at
// the timeout) silent player, and those in forced, are CANCELLED; the
// others, and the backfill ticket, go back to SEARCHING.
func (x *mmTx) endAcceptance(c *game.MatchmakingConfiguration, m *game.Match, acceptance string, forced map[string][2]string) error {
	ts, err := x.tickets(m.TicketIDs)
	if err != nil {
		return err
	}
	m.Status = game.MatchDone
	if err := x.tx.UpdateMatch(m); err != nil {
		return err
	}
	d := newMatchDetail(evAcceptCompleted, c, m, ts)
	d.Acceptance = acceptance
	if err := x.s.publishMatch(x.tx, c, d); err != nil {
		return err
	}
	for _, t := range ts {
		reason, msg, cancel := acceptanceVerdict(m, t, acceptance)
		if f, ok := forced[t.ID]; ok {
			reason, msg, cancel = f[0], f[1], true
		}
		if cancel {
			if err := x.setStatus(t, game.TicketCancelled, reason, msg); err != nil {
				return err
			}
			x.backfillEnded(t, "BACKFILL_CANCELLED")
			if err := x.s.publishEach(x.tx, c, evCancelled, m, []*game.MatchTicket{t}); err != nil {
				return err
			}
			continue
		}
		if err := x.backToPool(c, t); err != nil {
			return err
		}
	}
	return nil
}

// acceptanceVerdict says whether t is cancelled when m's acceptance ends
// as acceptance, and why.
func acceptanceVerdict(m *game.Match, t *game.MatchTicket, acceptance string) (reason, msg string, cancel bool) {
	if t.Backfill {
		return "", "", false
	}
	for _, p := range t.Players {
		a, answered := m.Answers[p.ID]
		if answered && !a {
			return "REJECTED", "Player(s) rejected the proposed match.", true
		}
		if !answered && acceptance == "TimedOut" {
			return "ACCEPTANCE_TIMED_OUT", "Players did not accept in time.", true
		}
	}
	return "", "", false
}

// backToPool returns a ticket of a failed proposal to SEARCHING, its
// StartTime unchanged and its teams cleared (backfill tickets keep the
// teams of the players already in the game).
func (x *mmTx) backToPool(c *game.MatchmakingConfiguration, t *game.MatchTicket) error {
	t.MatchID = ""
	if !t.Backfill {
		for i := range t.Players {
			t.Players[i].Team = ""
		}
	}
	if err := x.setStatus(t, game.TicketSearching, "ACCEPTANCE_FAILED",
		"Proposed match was not accepted; ticket returned to matchmaking."); err != nil {
		return err
	}
	return x.s.publishEach(x.tx, c, evSearching, nil, []*game.MatchTicket{t})
}

// backfillEnded tells a backfill ticket's game server, after commit, that
// the request ended without players (reason BACKFILL_CANCELLED, _FAILED
// or _TIMED_OUT).
func (x *mmTx) backfillEnded(t *game.MatchTicket, reason string) {
	if !t.Backfill || t.GameSessionARN == "" {
		return
	}
	gs, err := x.tx.GetGameSession(t.GameSessionARN)
	if err != nil {
		return
	}
	id := t.ID
	x.pushes = append(x.pushes, func() { x.s.pushSessionUpdate(gs, reason, id) })
}
