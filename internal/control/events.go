package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// recordEvent adds a fleet event at the service clock's now, inside tx.
// resourceID is what the event is about (the fleet, a compute, a game
// session...); empty means the fleet. code is one of the model's EventCode
// values (wire.EventCode*). Any area may call it.
func (s *Service) recordEvent(tx store.Tx, fleetID, resourceID, code, message string) error {
	if resourceID == "" {
		resourceID = fleetID
	}
	return tx.InsertEvent(&game.Event{
		ID:         "event-" + game.NewUUID(),
		FleetID:    fleetID,
		ResourceID: resourceID,
		Code:       code,
		Message:    message,
		Time:       s.clock(),
	})
}

// DescribeFleetEvents lists a fleet's events, oldest first, between
// StartTime and EndTime inclusive. NotFound when the fleet does not exist
// (or was deleted).
func (s *Service) DescribeFleetEvents(ctx context.Context, in *wire.DescribeFleetEventsInput) (*wire.DescribeFleetEventsOutput, error) {
	var start, end wire.Time
	if in.StartTime != nil {
		start = *in.StartTime
	}
	if in.EndTime != nil {
		end = *in.EndTime
	}
	if in.StartTime != nil && in.EndTime != nil && end.Before(start.Time) {
		return nil, game.Errorf(game.InvalidRequest, "EndTime must not be before StartTime")
	}
	out := &wire.DescribeFleetEventsOutput{Events: []wire.Event{}}
	err := s.view(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		list, next, err := tx.ListEvents(f.ID, start.Time, end.Time, store.RequestPage(in.Limit, in.NextToken))
		for _, e := range list {
			out.Events = append(out.Events, eventOut(e))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

func eventOut(e *game.Event) wire.Event {
	return wire.Event{
		EventId:    wire.String(e.ID),
		ResourceId: wire.String(e.ResourceID),
		EventCode:  wire.String(e.Code),
		Message:    wire.String(e.Message),
		EventTime:  wire.NewTime(e.Time),
	}
}
