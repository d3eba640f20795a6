package flexmatch

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/wire"
)

// StartMatchBackfill creates a QUEUED backfill ticket for a game session
// that FlexMatch made: Players are all players now in the session, each
// with its Team. A newer request for the session replaces the older one
// (its server hears BACKFILL_CANCELLED). Errors: NotFound (configuration,
// game session), InvalidRequest (no GameSessionArn WITH_QUEUE, a session
// not ACTIVE or without MatchmakerData, a team the rule set lacks).
func (s *Service) StartMatchBackfill(ctx context.Context, in *wire.StartMatchBackfillInput) (*wire.StartMatchBackfillOutput, error) {
	if len(in.Players) == 0 || len(in.Players) > maxBackfillPlayers {
		return nil, game.Errorf(game.InvalidRequest, "Players must hold 1 to %d players, not %d", maxBackfillPlayers, len(in.Players))
	}
	var t *game.MatchTicket
	err := s.mmUpdate(ctx, func(x *mmTx) error {
		c, rs, err := s.configAndRules(x.tx, wire.Deref(in.ConfigurationName))
		if err != nil {
			return err
		}
		if t, err = s.newTicket(c, rs, wire.Deref(in.TicketId), in.Players, true); err != nil {
			return err
		}
		if arn := wire.Deref(in.GameSessionArn); arn != "" || c.FlexMatchMode == game.FlexMatchWithQueue {
			if err := x.backfillTarget(t, arn); err != nil {
				return err
			}
		}
		return insertTicket(x.tx, t)
	})
	if err != nil {
		return nil, err
	}
	return &wire.StartMatchBackfillOutput{MatchmakingTicket: s.ticketOut(t)}, nil
}

// backfillTarget checks the session a backfill ticket fills and cancels
// the session's earlier backfill ticket.
func (x *mmTx) backfillTarget(t *game.MatchTicket, arn string) error {
	if arn == "" {
		return game.Errorf(game.InvalidRequest, "GameSessionArn is required for a WITH_QUEUE matchmaking configuration")
	}
	gs, err := x.tx.GetGameSession(arn)
	if err != nil {
		return err
	}
	if _, ok := readMatchmakerData(gs.MatchmakerData); !ok {
		return game.Errorf(game.InvalidRequest, "game session %s was not created by FlexMatch", arn)
	}
	if gs.Status != game.SessionActive {
		return game.Errorf(game.InvalidRequest, "game session %s is %s, not ACTIVE", arn, gs.Status)
	}
	t.GameSessionARN = gs.ID
	olds, err := x.tx.ActiveTicketsOfPlayer(t.Players[0].ID)
	if err != nil {
		return err
	}
	for _, old := range olds {
		if old.Backfill && old.GameSessionARN == gs.ID && old.ID != t.ID && old.Status != game.TicketPlacing {
			if err := x.s.cancelTicket(x, old.ID, "CANCELLED", "Replaced by a newer backfill request."); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillBackfill seats a backfill match's new players in the existing game
// session: player sessions RESERVED for them, MatchmakerData rewritten
// with the current and new players (same matchId), the server told
// MATCHMAKING_DATA_UPDATED, every ticket COMPLETED in that session. A
// session that cannot take them fails the backfill.
func (x *mmTx) fillBackfill(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, m *game.Match, ts []*game.MatchTicket) error {
	gs, err := x.tx.GetGameSession(m.GameSessionARN)
	if err != nil {
		return err
	}
	old, ok := readMatchmakerData(gs.MatchmakerData)
	var players, fresh []game.TicketPlayer
	var bf *game.MatchTicket
	for _, t := range ts {
		players = append(players, t.Players...)
		if t.Backfill {
			bf = t
		} else {
			fresh = append(fresh, t.Players...)
		}
	}
	ids := make([]string, 0, len(fresh))
	for _, p := range fresh {
		ids = append(ids, p.ID)
	}
	if !ok || gs.Status != game.SessionActive {
		x.backfillEnded(bf, "BACKFILL_FAILED")
		return x.fail(c, m, ts, game.TicketFailed)
	}
	seats, err := x.s.ctl.ReserveMatchSeats(x.tx, gs.ID, ids, x.now)
	if err != nil {
		if _, isGame := err.(*game.Error); !isGame {
			return err
		}
		x.backfillEnded(bf, "BACKFILL_FAILED")
		return x.fail(c, m, ts, game.TicketFailed)
	}
	seat := map[string]string{}
	for _, ps := range seats {
		seat[ps.PlayerID] = ps.ID
	}
	for _, t := range ts {
		for i := range t.Players {
			t.Players[i].PlayerSessionID = seat[t.Players[i].ID]
		}
	}
	auto := ""
	if old.AutoBackfillTicket != nil && *old.AutoBackfillTicket != bf.ID {
		auto = *old.AutoBackfillTicket
	}
	if gs.MatchmakerData, err = x.s.buildMatchmakerData(c, rs, old.MatchID, auto, players); err != nil {
		return err
	}
	if err := x.tx.UpdateGameSession(gs); err != nil {
		return err
	}
	id := bf.ID
	x.pushes = append(x.pushes, func() { x.s.pushSessionUpdate(gs, "MATCHMAKING_DATA_UPDATED", id) })
	if err := x.complete(c, m, ts, gs); err != nil {
		return err
	}
	if bf.AutoBackfill {
		return x.autoBackfill(c, gs)
	}
	return nil
}

// autoBackfill gives a session of an AUTOMATIC configuration with free
// slots its next automatic backfill ticket (the players now in its
// MatchmakerData, with their teams) and records the ticket id in the
// stored MatchmakerData; no push is sent for that.
func (x *mmTx) autoBackfill(c *game.MatchmakingConfiguration, gs *game.GameSession) error {
	if c.BackfillMode != game.BackfillAutomatic || gs.Status != game.SessionActive {
		return nil
	}
	d, ok := readMatchmakerData(gs.MatchmakerData)
	if !ok {
		return nil
	}
	t := &game.MatchTicket{ID: game.NewUUID(), ConfigName: c.Name, Status: game.TicketQueued, StartTime: x.now, Backfill: true,
		AutoBackfill: true, GameSessionARN: gs.ID, Deadline: x.now.Add(secondsOf(c.RequestTimeoutSeconds))}
	n := 0
	for _, team := range d.Teams {
		for _, p := range team.Players {
			t.Players = append(t.Players, game.TicketPlayer{ID: p.PlayerID, Team: team.Name, Attributes: attributesFromData(p.Attributes)})
			n++
		}
	}
	if n == 0 || n >= gs.MaximumPlayerSessionCount {
		return nil
	}
	if err := x.tx.InsertTicket(t); err != nil {
		return err
	}
	d.AutoBackfillTicket = &t.ID
	raw, err := jsonString(d)
	if err != nil {
		return err
	}
	gs.MatchmakerData = raw
	return x.tx.UpdateGameSession(gs)
}
