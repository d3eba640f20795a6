package flexmatch

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Process names a server process calling through the server SDK: its
// fleet, compute and process id (as processes.Ref).
type Process struct {
	FleetID     string
	ComputeName string
	PID         string
}

// ProcessStartMatchBackfill is the server SDK's StartMatchBackfill from
// process p: the game session must be p's; otherwise as
// StartMatchBackfill.
func (s *Service) ProcessStartMatchBackfill(ctx context.Context, p Process, r *sdkwire.StartMatchBackfill) (*sdkwire.StartMatchBackfillResult, error) {
	if err := s.hostedBy(ctx, p, r.GameSessionArn); err != nil {
		return nil, err
	}
	in := &wire.StartMatchBackfillInput{TicketId: wire.String(r.TicketId), ConfigurationName: wire.String(r.MatchmakingConfigurationArn),
		GameSessionArn: wire.String(r.GameSessionArn)}
	for _, pl := range r.Players {
		wp := wire.Player{PlayerId: wire.String(pl.PlayerId), Team: wire.String(pl.Team)}
		for k, a := range pl.PlayerAttributes {
			if wp.PlayerAttributes == nil {
				wp.PlayerAttributes = map[string]wire.AttributeValue{}
			}
			wp.PlayerAttributes[k] = sdkAttribute(a)
		}
		for loc, ms := range pl.LatencyInMs {
			if wp.LatencyInMs == nil {
				wp.LatencyInMs = map[string]int32{}
			}
			wp.LatencyInMs[loc] = int32(ms)
		}
		in.Players = append(in.Players, wp)
	}
	out, err := s.StartMatchBackfill(ctx, in)
	if err != nil {
		return nil, err
	}
	return &sdkwire.StartMatchBackfillResult{TicketId: *out.MatchmakingTicket.TicketId}, nil
}

// sdkAttribute converts an SDK attribute (AttrType names the member).
func sdkAttribute(a sdkwire.AttributeValue) wire.AttributeValue {
	switch a.AttrType {
	case "DOUBLE":
		n := a.N
		return wire.AttributeValue{N: &n}
	case "STRING_LIST":
		return wire.AttributeValue{SL: a.SL}
	case "STRING_DOUBLE_MAP":
		return wire.AttributeValue{SDM: a.SDM}
	}
	str := a.S
	return wire.AttributeValue{S: &str}
}

// ProcessStopMatchBackfill is the server SDK's StopMatchBackfill: it
// cancels a backfill ticket of p's game session.
func (s *Service) ProcessStopMatchBackfill(ctx context.Context, p Process, r *sdkwire.StopMatchBackfill) error {
	if err := s.hostedBy(ctx, p, r.GameSessionArn); err != nil {
		return err
	}
	return s.mmUpdate(ctx, func(x *mmTx) error {
		t, err := x.tx.GetTicket(r.TicketId)
		if err != nil {
			return err
		}
		if !t.Backfill || t.GameSessionARN != r.GameSessionArn {
			return game.Errorf(game.InvalidRequest, "ticket %s is not a backfill ticket of game session %s", t.ID, r.GameSessionArn)
		}
		if !t.Active() || t.Status == game.TicketPlacing {
			return game.Errorf(game.InvalidRequest, "backfill ticket %s is %s and cannot be stopped", t.ID, t.Status)
		}
		return s.cancelTicket(x, t.ID, "CANCELLED", "Cancelled by request.")
	})
}

// hostedBy answers InvalidRequest unless game session arn is hosted by p.
func (s *Service) hostedBy(ctx context.Context, p Process, arn string) error {
	var gs *game.GameSession
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		gs, err = tx.GetGameSession(arn)
		return err
	})
	if err != nil {
		return err
	}
	if gs.ProcessID == "" || (Process{gs.FleetID, gs.ComputeName, gs.ProcessID}) != p {
		return game.Errorf(game.InvalidRequest, "game session %s is not hosted by this process", arn)
	}
	return nil
}
