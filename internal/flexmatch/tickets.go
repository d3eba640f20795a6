package flexmatch

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Ticket limits of spec §2.1 that the model states only in prose.
const (
	maxTicketPlayers   = 10
	maxBackfillPlayers = 199
	maxDescribeTickets = 10
	maxPlayerAttrs     = 10
)

// StartMatchmaking creates a QUEUED ticket for 1–10 players on a
// configuration (name or ARN); the matchmaker takes it from there. A
// player's older active tickets (not PLACING, not backfill) are cancelled.
// Errors: NotFound (configuration), InvalidRequest (ticket id taken,
// players missing, duplicated or too many, an attribute whose type
// differs from the rule set's declaration).
func (s *Service) StartMatchmaking(ctx context.Context, in *wire.StartMatchmakingInput) (*wire.StartMatchmakingOutput, error) {
	if len(in.Players) == 0 || len(in.Players) > maxTicketPlayers {
		return nil, game.Errorf(game.InvalidRequest, "Players must hold 1 to %d players, not %d", maxTicketPlayers, len(in.Players))
	}
	var t *game.MatchTicket
	err := s.mmUpdate(ctx, func(x *mmTx) error {
		tx := x.tx
		c, rs, err := s.configAndRules(tx, wire.Deref(in.ConfigurationName))
		if err != nil {
			return err
		}
		if t, err = s.newTicket(c, rs, wire.Deref(in.TicketId), in.Players, false); err != nil {
			return err
		}
		if err := s.replaceOlderTickets(x, t); err != nil {
			return err
		}
		return insertTicket(tx, t)
	})
	if err != nil {
		return nil, err
	}
	return &wire.StartMatchmakingOutput{MatchmakingTicket: s.ticketOut(t)}, nil
}

// insertTicket stores a new ticket; a taken id is InvalidRequest.
func insertTicket(tx store.Tx, t *game.MatchTicket) error {
	err := tx.InsertTicket(t)
	if game.IsKind(err, game.Conflict) {
		return game.Errorf(game.InvalidRequest, "matchmaking ticket %s already exists", t.ID)
	}
	return err
}

// configAndRules loads a configuration (name or ARN) and its rule set.
func (s *Service) configAndRules(tx store.Tx, ref string) (*game.MatchmakingConfiguration, *ruleset.RuleSet, error) {
	c, err := tx.GetMatchConfig(game.ResourceID(ref, "matchmakingconfiguration"))
	if err != nil {
		return nil, nil, err
	}
	rec, err := tx.GetRuleSet(c.RuleSetName)
	if err != nil {
		return nil, nil, err
	}
	rs, err := rulesOf(rec.Body)
	return c, rs, err
}

// newTicket builds a QUEUED ticket, checking its players against rs.
// Backfill players must name a team instance of rs.
func (s *Service) newTicket(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, id string, in []wire.Player, backfill bool) (*game.MatchTicket, error) {
	if id == "" {
		id = game.NewUUID()
	}
	now := s.clock()
	t := &game.MatchTicket{ID: id, ConfigName: c.Name, Status: game.TicketQueued, StartTime: now, Backfill: backfill,
		Deadline: now.Add(time.Duration(c.RequestTimeoutSeconds) * time.Second)}
	seen := map[string]bool{}
	for i, p := range in {
		tp, err := playerIn(rs, i, p)
		if err != nil {
			return nil, err
		}
		if seen[tp.ID] {
			return nil, game.Errorf(game.InvalidRequest, "Players lists player %s more than once", tp.ID)
		}
		seen[tp.ID] = true
		if backfill {
			if len(rs.InstancesOf(tp.Team)) != 1 || tp.Team == "" {
				return nil, game.Errorf(game.InvalidRequest, "Players[%d].Team must name a team of rule set %s", i, rs.Name)
			}
		} else {
			tp.Team = ""
		}
		t.Players = append(t.Players, tp)
	}
	return t, nil
}

// playerIn converts and checks Players[i].
func playerIn(rs *ruleset.RuleSet, i int, p wire.Player) (game.TicketPlayer, error) {
	tp := game.TicketPlayer{ID: wire.Deref(p.PlayerId), Team: wire.Deref(p.Team)}
	if tp.ID == "" {
		return tp, game.Errorf(game.InvalidRequest, "Players[%d].PlayerId is required", i)
	}
	if len(p.PlayerAttributes) > maxPlayerAttrs {
		return tp, game.Errorf(game.InvalidRequest, "player %s has %d attributes; at most %d are allowed", tp.ID, len(p.PlayerAttributes), maxPlayerAttrs)
	}
	vals, err := attributeValues(p.PlayerAttributes)
	if err != nil {
		return tp, err
	}
	if err := rs.CheckAttributes(vals); err != nil {
		return tp, game.Errorf(game.InvalidRequest, "player %s: %s", tp.ID, err.Error())
	}
	if len(p.PlayerAttributes) > 0 {
		tp.Attributes = make(map[string]game.AttributeValue, len(p.PlayerAttributes))
		for k, a := range p.PlayerAttributes {
			tp.Attributes[k] = game.AttributeValue{S: a.S, N: a.N, SL: a.SL, SDM: a.SDM}
		}
	}
	for loc, ms := range p.LatencyInMs {
		if tp.LatencyMs == nil {
			tp.LatencyMs = map[string]int{}
		}
		tp.LatencyMs[loc] = int(ms)
	}
	return tp, nil
}

// replaceOlderTickets cancels the active tickets of t's players that a
// new request replaces (spec §5.1 item 4).
func (s *Service) replaceOlderTickets(x *mmTx, t *game.MatchTicket) error {
	for _, p := range t.Players {
		olds, err := x.tx.ActiveTicketsOfPlayer(p.ID)
		if err != nil {
			return err
		}
		for _, old := range olds {
			if old.Backfill || old.Status == game.TicketPlacing {
				continue
			}
			if err := s.cancelTicket(x, old.ID, "REPLACED", "Player started a new matchmaking request."); err != nil {
				return err
			}
		}
	}
	return nil
}

// DescribeMatchmaking returns the tickets that exist among up to 10 ids,
// silently leaving out unknown ones.
func (s *Service) DescribeMatchmaking(ctx context.Context, in *wire.DescribeMatchmakingInput) (*wire.DescribeMatchmakingOutput, error) {
	if len(in.TicketIds) > maxDescribeTickets {
		return nil, game.Errorf(game.InvalidRequest, "TicketIds must hold at most %d ids, not %d", maxDescribeTickets, len(in.TicketIds))
	}
	out := &wire.DescribeMatchmakingOutput{TicketList: []wire.MatchmakingTicket{}}
	err := s.view(ctx, func(tx store.Tx) error {
		waits := map[string]*int32{}
		for _, id := range in.TicketIds {
			t, err := tx.GetTicket(id)
			if game.IsKind(err, game.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			tk := s.ticketOut(t)
			if t.Active() {
				w, seen := waits[t.ConfigName]
				if !seen {
					secs, ok, err := estimatedWait(tx, t.ConfigName)
					if err != nil {
						return err
					}
					if ok {
						w = wire.Int32(secs)
					}
					waits[t.ConfigName] = w
				}
				tk.EstimatedWaitTime = w
			}
			out.TicketList = append(out.TicketList, *tk)
		}
		return nil
	})
	return out, err
}

// StopMatchmaking cancels a ticket that is QUEUED, SEARCHING or awaiting
// acceptance (dropping its proposed match). NotFound for an unknown
// ticket; InvalidRequest for one PLACING or already ended.
func (s *Service) StopMatchmaking(ctx context.Context, in *wire.StopMatchmakingInput) (*wire.StopMatchmakingOutput, error) {
	err := s.mmUpdate(ctx, func(x *mmTx) error {
		t, err := x.tx.GetTicket(wire.Deref(in.TicketId))
		if err != nil {
			return err
		}
		if !t.Active() {
			return game.Errorf(game.InvalidRequest, "matchmaking ticket %s is %s and cannot be stopped", t.ID, t.Status)
		}
		if t.Status == game.TicketPlacing {
			return game.Errorf(game.InvalidRequest, "matchmaking ticket %s is PLACING; its game session may already exist", t.ID)
		}
		return s.cancelTicket(x, t.ID, "CANCELLED", "Cancelled by request.")
	})
	if err != nil {
		return nil, err
	}
	return &wire.StopMatchmakingOutput{}, nil
}

// ticketOut is a ticket as DescribeMatchmaking shows it.
func (s *Service) ticketOut(t *game.MatchTicket) *wire.MatchmakingTicket {
	out := &wire.MatchmakingTicket{
		TicketId: wire.String(t.ID), ConfigurationName: wire.String(t.ConfigName),
		ConfigurationArn: wire.String(s.cfg.Account.MatchmakingConfigurationARN(t.ConfigName)),
		Status:           wire.String(t.Status), StatusReason: wire.String(t.StatusReason), StatusMessage: wire.String(t.StatusMessage),
		StartTime: wire.NewTime(t.StartTime), Players: []wire.Player{},
	}
	if !t.EndTime.IsZero() {
		out.EndTime = wire.NewTime(t.EndTime)
	}
	for _, p := range t.Players {
		wp := wire.Player{PlayerId: wire.String(p.ID), Team: wire.String(p.Team)}
		for k, a := range p.Attributes {
			if wp.PlayerAttributes == nil {
				wp.PlayerAttributes = map[string]wire.AttributeValue{}
			}
			wp.PlayerAttributes[k] = wire.AttributeValue{S: a.S, N: a.N, SL: a.SL, SDM: a.SDM}
		}
		for loc, ms := range p.LatencyMs {
			if wp.LatencyInMs == nil {
				wp.LatencyInMs = map[string]int32{}
			}
			wp.LatencyInMs[loc] = int32(ms)
		}
		out.Players = append(out.Players, wp)
	}
	if t.GameSessionARN != "" && (t.Backfill || t.Status == game.TicketCompleted) {
		ci := &wire.GameSessionConnectionInfo{GameSessionArn: wire.String(t.GameSessionARN)}
		if t.Status == game.TicketCompleted {
			ci.IpAddress, ci.DnsName = wire.String(t.IPAddress), wire.String(t.DNSName)
			if t.Port > 0 {
				ci.Port = wire.Int32(t.Port)
			}
			ci.MatchedPlayerSessions = []wire.MatchedPlayerSession{}
			for _, p := range t.Players {
				ci.MatchedPlayerSessions = append(ci.MatchedPlayerSessions,
					wire.MatchedPlayerSession{PlayerId: wire.String(p.ID), PlayerSessionId: wire.String(p.PlayerSessionID)})
			}
		}
		out.GameSessionConnectionInfo = ci
	}
	return out
}

func secondsOf(n int) time.Duration { return time.Duration(n) * time.Second }
