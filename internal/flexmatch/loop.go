package flexmatch

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/store"
)

const (
	// matchLease is how long a node stays a configuration's matchmaker
	// without renewing; it renews on every step.
	matchLease = 10 * time.Second
	// matchBatch bounds the records one matchmaking transaction moves.
	matchBatch = 200
	// TicketRetention is how long an ended ticket stays describable.
	TicketRetention = 30 * time.Minute
)

// StepMatchmaking runs one matchmaking step, at the service clock's now,
// for every configuration this node holds (or can take) the lease of:
// request and acceptance time-outs, QUEUED tickets into the pool, then
// the matcher over the SEARCHING pool. Every status change is a
// conditional update, so steps on several nodes never move a ticket
// twice; the lease only keeps them from doing the same work.
func (s *Service) StepMatchmaking(ctx context.Context) error {
	if err := s.forgetEndedTickets(ctx); err != nil {
		return err
	}
	var token string
	for {
		var list []*game.MatchmakingConfiguration
		err := s.view(ctx, func(tx store.Tx) error {
			var err error
			list, token, err = tx.ListMatchConfigs("", store.Page{Limit: 100, Token: token})
			return err
		})
		if err != nil {
			return err
		}
		for _, c := range list {
			if err := s.stepConfig(ctx, c.Name); err != nil {
				return err
			}
		}
		if token == "" {
			return nil
		}
	}
}

// MatchmakerID is the name this node holds matchmaker leases under.
func (s *Service) MatchmakerID() string { return s.mmOwner }

// stepConfig is one step for one configuration, when this node leads it.
func (s *Service) stepConfig(ctx context.Context, name string) error {
	now := s.clock()
	held := false
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		held, err = tx.LeaseMatchmaker(name, s.mmOwner, now, now.Add(matchLease))
		return err
	})
	if err != nil || !held {
		return err
	}
	for _, step := range []func(context.Context, string, time.Time) error{
		s.timeOutTickets, s.timeOutAcceptances, s.startSearching, s.matchPool,
	} {
		if err := step(ctx, name, now); err != nil {
			return err
		}
	}
	return nil
}

// timeOutTickets ends QUEUED and SEARCHING tickets past their request
// timeout TIMED_OUT (a backfill ticket's server hears BACKFILL_TIMED_OUT),
// and cancels the placement of a PLACING ticket past it while no game
// session was created (its tickets then time out).
func (s *Service) timeOutTickets(ctx context.Context, name string, now time.Time) error {
	for _, status := range []string{game.TicketQueued, game.TicketSearching, game.TicketPlacing} {
		for {
			n := 0
			var away map[string]string // automatic backfill ticket → the node owning its session's fleet
			err := s.mmUpdate(ctx, func(x *mmTx) error {
				away = nil
				due, err := x.tx.ListDueTickets(name, status, now, matchBatch)
				n = len(due)
				if err != nil || n == 0 {
					return err
				}
				c, err := x.tx.GetMatchConfig(name)
				for _, t := range due {
					if err != nil {
						break
					}
					switch owner := s.elsewhere(t.GameSessionARN); {
					case status == game.TicketPlacing:
						err = x.timeOutPlacing(t)
					case t.AutoBackfill && owner != "":
						if away == nil {
							away = map[string]string{}
						}
						away[t.ID] = owner // its next ticket is written into the session, by the owner
					default:
						err = x.timeOut(c, t)
					}
				}
				return err
			})
			if err != nil {
				return err
			}
			sent := true
			for id, owner := range away {
				sent = s.sendFleetMatch(ctx, owner, &FleetMatchCall{Config: name, TimedOut: id}) == nil && sent
			}
			if n < matchBatch || status == game.TicketPlacing || !sent {
				break // PLACING tickets whose session is starting stay listed, as do tickets not sent: one pass
			}
		}
	}
	return nil
}

// timeOutAcceptances closes acceptance windows that have passed.
func (s *Service) timeOutAcceptances(ctx context.Context, name string, now time.Time) error {
	var due []*game.Match
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		due, err = tx.ListDueAcceptances(name, now, matchBatch)
		return err
	})
	for _, d := range due {
		if err != nil {
			break
		}
		err = s.mmUpdate(ctx, func(x *mmTx) error {
			m, err := x.tx.GetMatch(d.ID)
			if err != nil || m.Status != game.MatchAcceptance || now.Before(m.AcceptDeadline) {
				return err
			}
			c, err := x.tx.GetMatchConfig(name)
			if err != nil {
				return err
			}
			return x.endAcceptance(c, m, "TimedOut", nil)
		})
	}
	return err
}

// startSearching moves QUEUED tickets into the pool (SEARCHING), with
// MatchmakingSearching for each.
func (s *Service) startSearching(ctx context.Context, name string, now time.Time) error {
	for {
		n := 0
		err := s.mmUpdate(ctx, func(x *mmTx) error {
			list, err := x.tx.ListTickets(name, game.TicketQueued, "", matchBatch)
			n = len(list)
			if err != nil || n == 0 {
				return err
			}
			c, err := x.tx.GetMatchConfig(name)
			for _, t := range list {
				if err != nil {
					break
				}
				err = x.setStatus(t, game.TicketSearching, "", "")
			}
			if err != nil {
				return err
			}
			return s.publishEach(x.tx, c, evSearching, nil, list)
		})
		if err != nil || n < matchBatch {
			return err
		}
	}
}

// matchPool runs the matcher over the SEARCHING pool at now and claims
// the matches it proposes, a batch of matches per transaction.
func (s *Service) matchPool(ctx context.Context, name string, now time.Time) error {
	var (
		c    *game.MatchmakingConfiguration
		rs   *ruleset.RuleSet
		pool []matchmaking.Ticket
	)
	var sessions map[string]string
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		if c, rs, err = s.configAndRules(tx, name); err != nil {
			return err
		}
		pool, sessions, err = loadPool(tx, name)
		return err
	})
	if err != nil || len(pool) == 0 {
		return err
	}
	found := matchmaking.Find(rs, pool, now, matchmaking.Options{AdditionalPlayerCount: c.AdditionalPlayerCount, Seed: now.UnixNano()})
	for start := 0; start < len(found); start += matchBatch {
		batch := found[start:min(len(found), start+matchBatch)]
		// A match that fills a session of another node's fleet is that
		// node's to make (remote.go); the others are made here.
		var here []matchmaking.Match
		away := map[int]string{}
		for i, fm := range batch {
			if owner := s.backfillElsewhere(fm, sessions); owner != "" {
				away[i] = owner
				continue
			}
			here = append(here, fm)
		}
		err := s.mmUpdate(ctx, func(x *mmTx) error {
			for _, fm := range here {
				if _, err := x.propose(c, rs, fm); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, owner := range away {
			s.sendFleetMatch(ctx, owner, &FleetMatchCall{Config: name, Tickets: batch[i].Tickets, Locations: batch[i].Locations})
		}
	}
	return nil
}

// backfillElsewhere is the forwarding address of the node owning the
// fleet of the session match fm backfills when that is another node, or
// "".
func (s *Service) backfillElsewhere(fm matchmaking.Match, sessions map[string]string) string {
	for _, p := range fm.Tickets {
		if arn, ok := sessions[p.TicketID]; ok {
			return s.elsewhere(arn)
		}
	}
	return ""
}

// loadPool reads a configuration's SEARCHING tickets as the matcher sees
// them, and the game session of each backfill ticket among them.
func loadPool(tx store.Tx, name string) ([]matchmaking.Ticket, map[string]string, error) {
	var pool []matchmaking.Ticket
	sessions := map[string]string{}
	after := ""
	for {
		list, err := tx.ListTickets(name, game.TicketSearching, after, 1000)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range list {
			mt, err := poolTicket(t)
			if err != nil {
				return nil, nil, err
			}
			pool = append(pool, mt)
			if t.Backfill && t.GameSessionARN != "" {
				sessions[t.ID] = t.GameSessionARN
			}
		}
		if len(list) < 1000 {
			return pool, sessions, nil
		}
		after = list[len(list)-1].ID
	}
}

func poolTicket(t *game.MatchTicket) (matchmaking.Ticket, error) {
	mt := matchmaking.Ticket{ID: t.ID, StartTime: t.StartTime, Backfill: t.Backfill}
	for _, p := range t.Players {
		attrs, err := storedValues(p.Attributes)
		if err != nil {
			return mt, err
		}
		mp := matchmaking.Player{ID: p.ID, Attributes: attrs, LatencyMs: p.LatencyMs}
		if t.Backfill {
			mp.Team = p.Team
		}
		mt.Players = append(mt.Players, mp)
	}
	return mt, nil
}

// forgetEndedTickets deletes tickets that ended more than TicketRetention
// ago, so DescribeMatchmaking no longer shows them.
func (s *Service) forgetEndedTickets(ctx context.Context) error {
	before := s.clock().Add(-TicketRetention)
	for {
		n := 0
		err := s.update(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteEndedTickets(before, matchBatch)
			return err
		})
		if err != nil || n < matchBatch {
			return err
		}
	}
}

// timeOut ends a ticket past its request timeout TIMED_OUT. A backfill
// ticket's server hears BACKFILL_TIMED_OUT; an automatic one is followed
// by the next automatic ticket while its session has free slots.
func (x *mmTx) timeOut(c *game.MatchmakingConfiguration, t *game.MatchTicket) error {
	if err := x.setStatus(t, game.TicketTimedOut, "TIMED_OUT", "Removed from matchmaking due to timing out."); err != nil {
		return err
	}
	x.backfillEnded(t, "BACKFILL_TIMED_OUT")
	if err := x.s.publishEach(x.tx, c, evTimedOut, nil, []*game.MatchTicket{t}); err != nil {
		return err
	}
	if !t.AutoBackfill {
		return nil
	}
	gs, err := x.tx.GetGameSession(t.GameSessionARN)
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return x.autoBackfill(c, gs)
}

// timeOutPlacing cancels the pending placement of PLACING ticket t's
// match when it has no game session yet; the placement's end times the
// match's tickets out. A ticket whose session is being created waits for
// it.
func (x *mmTx) timeOutPlacing(t *game.MatchTicket) error {
	m, err := x.tx.GetMatch(t.MatchID)
	if err != nil || m.Status != game.MatchPlacing {
		return err
	}
	p, err := x.tx.GetPlacement(m.PlacementID())
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	if err != nil || p.Status != game.PlacementPending || p.GameSessionID != "" {
		return err
	}
	return x.s.queues.CancelPlacement(x.tx, p)
}
