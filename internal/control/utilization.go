package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Utilization and capacity. GameLift reports neither for Anywhere fleets;
// Anylift reports real numbers: a compute counts as an instance, an idle
// instance is a compute hosting no live game session (semantics.md §7.4).

// fleetsFor returns the fleets named by ids (missing ones silently left
// out, Limit and NextToken ignored, as DescribeFleetAttributes does), or a
// page of all fleets when ids is empty.
func fleetsFor(tx store.Tx, ids []string, limit *int32, token *string) ([]*game.Fleet, string, error) {
	if len(ids) == 0 {
		return tx.ListFleets(store.Page{Limit: int(wire.Deref(limit)), Token: wire.Deref(token)})
	}
	var out []*game.Fleet
	for _, id := range ids {
		f, err := tx.GetFleet(game.ResourceID(id, "fleet"))
		if game.IsKind(err, game.NotFound) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		out = append(out, f)
	}
	return out, "", nil
}

// usage is one fleet's numbers in one location.
type usage struct {
	store.LocationUsage
	Computes  int
	Processes int
}

// fleetUsage returns f's usage per location, one entry for every location
// of the fleet, in the fleet's location order.
func (s *Service) fleetUsage(tx store.Tx, f *game.Fleet) ([]usage, error) {
	sessions, err := tx.FleetUsage(f.ID)
	if err != nil {
		return nil, err
	}
	computes, err := tx.CountComputes(f.ID)
	if err != nil {
		return nil, err
	}
	processes, err := s.activeProcesses(tx, f.ID)
	if err != nil {
		return nil, err
	}
	byLoc := map[string]store.LocationUsage{}
	for _, u := range sessions {
		byLoc[u.Location] = u
	}
	out := make([]usage, 0, len(f.Locations))
	for _, loc := range f.Locations {
		u := usage{LocationUsage: byLoc[loc], Computes: computes[loc], Processes: processes[loc]}
		u.Location = loc
		out = append(out, u)
	}
	return out, nil
}

func utilizationOut(f *game.Fleet, location string, u usage) wire.FleetUtilization {
	return wire.FleetUtilization{
		FleetId:                   wire.String(f.ID),
		FleetArn:                  wire.String(f.ARN),
		ActiveServerProcessCount:  wire.Int32(u.Processes),
		ActiveGameSessionCount:    wire.Int32(u.ActiveGameSessions),
		CurrentPlayerSessionCount: wire.Int32(u.CurrentPlayers),
		MaximumPlayerSessionCount: wire.Int32(u.MaximumPlayers),
		Location:                  wire.String(location),
	}
}

func capacityOut(f *game.Fleet, location string, u usage) wire.FleetCapacity {
	idle := u.Computes - u.BusyComputes
	if idle < 0 {
		idle = 0
	}
	return wire.FleetCapacity{
		FleetId:  wire.String(f.ID),
		FleetArn: wire.String(f.ARN),
		InstanceCounts: &wire.EC2InstanceCounts{
			DESIRED: wire.Int32(u.Computes), MINIMUM: wire.Int32(0), MAXIMUM: wire.Int32(u.Computes),
			PENDING: wire.Int32(0), ACTIVE: wire.Int32(u.Computes), IDLE: wire.Int32(idle), TERMINATING: wire.Int32(0),
		},
		Location: wire.String(location),
	}
}

// sum adds up a fleet's locations, for the fleet-wide operations.
func sum(us []usage) usage {
	var t usage
	for _, u := range us {
		t.ActiveGameSessions += u.ActiveGameSessions
		t.LiveGameSessions += u.LiveGameSessions
		t.CurrentPlayers += u.CurrentPlayers
		t.MaximumPlayers += u.MaximumPlayers
		t.BusyComputes += u.BusyComputes
		t.Computes += u.Computes
		t.Processes += u.Processes
	}
	return t
}

// DescribeFleetUtilization reports each fleet's totals over all its
// locations, in the home region's name.
func (s *Service) DescribeFleetUtilization(ctx context.Context, in *wire.DescribeFleetUtilizationInput) (*wire.DescribeFleetUtilizationOutput, error) {
	out := &wire.DescribeFleetUtilizationOutput{FleetUtilization: []wire.FleetUtilization{}}
	err := s.view(ctx, func(tx store.Tx) error {
		fleets, next, err := fleetsFor(tx, in.FleetIds, in.Limit, in.NextToken)
		if err != nil {
			return err
		}
		for _, f := range fleets {
			us, err := s.fleetUsage(tx, f)
			if err != nil {
				return err
			}
			out.FleetUtilization = append(out.FleetUtilization, utilizationOut(f, s.cfg.Account.Region, sum(us)))
		}
		out.NextToken = wire.String(next)
		return nil
	})
	return out, err
}

// DescribeFleetCapacity reports each fleet's computes as instances, over
// all its locations; a container fleet's as containerCapacity says.
func (s *Service) DescribeFleetCapacity(ctx context.Context, in *wire.DescribeFleetCapacityInput) (*wire.DescribeFleetCapacityOutput, error) {
	out := &wire.DescribeFleetCapacityOutput{FleetCapacity: []wire.FleetCapacity{}}
	err := s.view(ctx, func(tx store.Tx) error {
		fleets, next, err := fleetsFor(tx, in.FleetIds, in.Limit, in.NextToken)
		if err != nil {
			return err
		}
		for _, f := range fleets {
			if f.Container != nil {
				fc, err := s.containerCapacity(tx, f, s.cfg.Account.Region)
				if err != nil {
					return err
				}
				out.FleetCapacity = append(out.FleetCapacity, fc)
				continue
			}
			us, err := s.fleetUsage(tx, f)
			if err != nil {
				return err
			}
			out.FleetCapacity = append(out.FleetCapacity, capacityOut(f, s.cfg.Account.Region, sum(us)))
		}
		out.NextToken = wire.String(next)
		return nil
	})
	return out, err
}

// locationUsage returns the usage of one of the fleet's locations;
// InvalidRequest when the fleet does not use it.
func (s *Service) locationUsage(tx store.Tx, fleetID, location string) (*game.Fleet, usage, error) {
	f, err := tx.GetFleet(game.ResourceID(fleetID, "fleet"))
	if err != nil {
		return nil, usage{}, err
	}
	us, err := s.fleetUsage(tx, f)
	if err != nil {
		return nil, usage{}, err
	}
	for _, u := range us {
		if u.Location == location {
			return f, u, nil
		}
	}
	return nil, usage{}, game.Errorf(game.InvalidRequest, "fleet %s has no location %s", f.ID, location)
}

// DescribeFleetLocationUtilization reports one location of a fleet.
func (s *Service) DescribeFleetLocationUtilization(ctx context.Context, in *wire.DescribeFleetLocationUtilizationInput) (*wire.DescribeFleetLocationUtilizationOutput, error) {
	out := &wire.DescribeFleetLocationUtilizationOutput{}
	err := s.view(ctx, func(tx store.Tx) error {
		f, u, err := s.locationUsage(tx, *in.FleetId, *in.Location)
		if err == nil {
			fu := utilizationOut(f, *in.Location, u)
			out.FleetUtilization = &fu
		}
		return err
	})
	return out, err
}

// DescribeFleetLocationCapacity reports one location of a fleet.
func (s *Service) DescribeFleetLocationCapacity(ctx context.Context, in *wire.DescribeFleetLocationCapacityInput) (*wire.DescribeFleetLocationCapacityOutput, error) {
	out := &wire.DescribeFleetLocationCapacityOutput{}
	err := s.view(ctx, func(tx store.Tx) error {
		f, u, err := s.locationUsage(tx, *in.FleetId, *in.Location)
		if err != nil {
			return err
		}
		fc := capacityOut(f, *in.Location, u)
		if f.Container != nil {
			if fc, err = s.containerCapacity(tx, f, *in.Location); err != nil {
				return err
			}
		}
		out.FleetCapacity = &fc
		return nil
	})
	return out, err
}
