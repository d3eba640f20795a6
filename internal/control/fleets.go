package control

import (
	"context"
	"fmt"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// defaultMetricGroup is the metric group GameLift gives a fleet created
// without one.
const defaultMetricGroup = "default"

// CreateFleet creates an Anywhere fleet over existing custom locations. The
// fleet is ACTIVE at once and records the events
// FLEET_CREATED then FLEET_STATE_ACTIVE. Errors: InvalidRequest for another
// compute type or a bad runtime configuration, NotFound for a location that
// is not an existing custom location.
func (s *Service) CreateFleet(ctx context.Context, in *wire.CreateFleetInput) (*wire.CreateFleetOutput, error) {
	f, err := s.newFleet(in)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		for _, name := range f.Locations {
			if _, err := tx.GetLocation(name); game.IsKind(err, game.NotFound) {
				return game.Errorf(game.NotFound, "Locations: %s is not an existing custom location; create it with CreateLocation first", name)
			} else if err != nil {
				return err
			}
		}
		if err := s.insertFleet(tx, f, in.Tags); err != nil {
			return err
		}
		return s.recordEvent(tx, f.ID, "", wire.EventCodeFleetStateActive, fmt.Sprintf("Fleet %s changed status to ACTIVE.", f.ID))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateFleetOutput{FleetAttributes: s.fleetOut(f), LocationStates: locationStates(f.Locations)}, nil
}

// newFleet builds the fleet CreateFleet asks for, checking the rules the
// model cannot express.
func (s *Service) newFleet(in *wire.CreateFleetInput) (*game.Fleet, error) {
	if ct := wire.Deref(in.ComputeType); ct != wire.ComputeTypeAnywhere {
		if ct == "" {
			ct = "EC2 (the default)"
		}
		return nil, game.Errorf(game.InvalidRequest, "ComputeType %s is not supported: Anylift hosts ANYWHERE fleets only; set ComputeType to ANYWHERE", ct)
	}
	if wire.Deref(in.FleetType) == wire.FleetTypeSpot {
		return nil, game.Errorf(game.InvalidRequest, "FleetType SPOT is not supported for ANYWHERE fleets")
	}
	if len(in.Locations) == 0 {
		return nil, game.Errorf(game.InvalidRequest, "Locations is required for an ANYWHERE fleet: give at least one custom location")
	}
	rc, err := runtimeIn(in.RuntimeConfiguration, "RuntimeConfiguration")
	if err != nil {
		return nil, err
	}
	id := game.NewFleetID()
	f := &game.Fleet{
		ID:                             id,
		ARN:                            s.cfg.Account.FleetARN(id),
		Name:                           *in.Name,
		Description:                    wire.Deref(in.Description),
		Status:                         game.FleetActive,
		CreationTime:                   s.clock(),
		ComputeType:                    wire.ComputeTypeAnywhere,
		NewGameSessionProtectionPolicy: game.NoProtection,
		MetricGroups:                   []string{defaultMetricGroup},
		Runtime:                        rc,
	}
	seen := map[string]bool{}
	for _, l := range in.Locations {
		if name := wire.Deref(l.Location); !seen[name] {
			seen[name] = true
			f.Locations = append(f.Locations, name)
		}
	}
	applyFleetAttributes(f, in.NewGameSessionProtectionPolicy, in.ResourceCreationLimitPolicy, in.MetricGroups, in.AnywhereConfiguration)
	return f, nil
}

// applyFleetAttributes sets the attributes given (non-nil) on f: those of
// every fleet (wire.ApplyFleetAttributes), and an Anywhere fleet's cost.
func applyFleetAttributes(f *game.Fleet, protection *string, limit *wire.ResourceCreationLimitPolicy, groups []string, anywhere *wire.AnywhereConfiguration) {
	wire.ApplyFleetAttributes(f, protection, limit, groups)
	if anywhere != nil {
		f.AnywhereCost = wire.Deref(anywhere.Cost)
	}
}

// DescribeFleetAttributes describes the fleets named in FleetIds (ids or
// ARNs; missing fleets are silently left out, Limit and NextToken ignored),
// or a page of all fleets.
func (s *Service) DescribeFleetAttributes(ctx context.Context, in *wire.DescribeFleetAttributesInput) (*wire.DescribeFleetAttributesOutput, error) {
	out := &wire.DescribeFleetAttributesOutput{FleetAttributes: []wire.FleetAttributes{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if len(in.FleetIds) > 0 {
			list, err := fleetsByID(tx, in.FleetIds)
			for _, f := range list {
				out.FleetAttributes = append(out.FleetAttributes, *s.fleetOut(f))
			}
			return err
		}
		list, next, err := tx.ListFleets(store.RequestPage(in.Limit, in.NextToken))
		for _, f := range list {
			out.FleetAttributes = append(out.FleetAttributes, *s.fleetOut(f))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// fleetsByID returns the fleets that exist among ids (ids or ARNs), in the
// order asked, each once.
func fleetsByID(tx store.Tx, ids []string) ([]*game.Fleet, error) {
	var out []*game.Fleet
	seen := map[string]bool{}
	for _, idOrARN := range ids {
		id := game.ResourceID(idOrARN, "fleet")
		if seen[id] {
			continue
		}
		seen[id] = true
		f, err := tx.GetFleet(id)
		if game.IsKind(err, game.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ListFleets lists fleet ids, a page at a time. Anylift has no builds or
// scripts, so a BuildId or ScriptId filter matches no fleet.
func (s *Service) ListFleets(ctx context.Context, in *wire.ListFleetsInput) (*wire.ListFleetsOutput, error) {
	out := &wire.ListFleetsOutput{FleetIds: []string{}}
	if in.BuildId != nil || in.ScriptId != nil {
		return out, nil
	}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListFleets(store.RequestPage(in.Limit, in.NextToken))
		for _, f := range list {
			out.FleetIds = append(out.FleetIds, f.ID)
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// UpdateFleetAttributes changes the attributes given. A changed protection
// policy records FLEET_NEW_GAME_SESSION_PROTECTION_POLICY_UPDATED; it
// applies to game sessions created afterwards.
func (s *Service) UpdateFleetAttributes(ctx context.Context, in *wire.UpdateFleetAttributesInput) (*wire.UpdateFleetAttributesOutput, error) {
	var f *game.Fleet
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(game.ResourceID(*in.FleetId, "fleet")); err != nil {
			return err
		}
		oldPolicy := f.NewGameSessionProtectionPolicy
		if in.Name != nil {
			f.Name = *in.Name
		}
		if in.Description != nil {
			f.Description = *in.Description
		}
		applyFleetAttributes(f, in.NewGameSessionProtectionPolicy, in.ResourceCreationLimitPolicy, in.MetricGroups, in.AnywhereConfiguration)
		if err := tx.UpdateFleet(f); err != nil {
			return err
		}
		return s.protectionChanged(tx, f, oldPolicy)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateFleetAttributesOutput{FleetId: wire.String(f.ID), FleetArn: wire.String(f.ARN)}, nil
}

// protectionChanged records FLEET_NEW_GAME_SESSION_PROTECTION_POLICY_UPDATED
// when f's protection policy is no longer old.
func (s *Service) protectionChanged(tx store.Tx, f *game.Fleet, old string) error {
	if f.NewGameSessionProtectionPolicy == old {
		return nil
	}
	return s.recordEvent(tx, f.ID, "", wire.EventCodeFleetNewGameSessionProtectionPolicyUpdated,
		fmt.Sprintf("Fleet %s new game session protection policy changed from %s to %s.", f.ID, old, f.NewGameSessionProtectionPolicy))
}

// DeleteFleet deletes a fleet: its computes are deregistered, its live game
// sessions ended, FLEET_DELETED recorded, and the record removed, so that
// later calls about it answer NotFound. The operation has no output
// members (the model declares none).
func (s *Service) DeleteFleet(ctx context.Context, in *wire.DeleteFleetInput) (*struct{}, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		return s.deleteFleet(tx, f)
	})
	if err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

// deleteFleet deregisters f's computes, ends its live sessions, records
// FLEET_DELETED and removes the fleet with its tags.
func (s *Service) deleteFleet(tx store.Tx, f *game.Fleet) error {
	if err := s.deleteFleetComputes(tx, f.ID); err != nil {
		return err
	}
	if err := s.endFleetSessions(tx, f.ID); err != nil {
		return err
	}
	if err := s.recordEvent(tx, f.ID, "", wire.EventCodeFleetDeleted, fmt.Sprintf("Fleet %s deleted.", f.ID)); err != nil {
		return err
	}
	if err := tx.DeleteAllTags(f.ARN); err != nil {
		return err
	}
	return tx.DeleteFleet(f.ID)
}

// fleetOut is a fleet's FleetAttributes.
func (s *Service) fleetOut(f *game.Fleet) *wire.FleetAttributes {
	a := &wire.FleetAttributes{
		FleetId:                        wire.String(f.ID),
		FleetArn:                       wire.String(f.ARN),
		FleetType:                      wire.String(wire.FleetTypeOnDemand),
		Name:                           wire.String(f.Name),
		Description:                    wire.String(f.Description),
		CreationTime:                   wire.NewTime(f.CreationTime),
		Status:                         wire.String(fleetStatus(f)),
		NewGameSessionProtectionPolicy: wire.String(f.NewGameSessionProtectionPolicy),
		ResourceCreationLimitPolicy: &wire.ResourceCreationLimitPolicy{
			NewGameSessionsPerCreator: wire.Int32(f.CreationLimit.NewGameSessionsPerCreator),
			PolicyPeriodInMinutes:     wire.Int32(f.CreationLimit.PolicyPeriodInMinutes),
		},
		MetricGroups: append([]string{}, f.MetricGroups...),
		ComputeType:  wire.String(f.ComputeType),
	}
	if !f.TerminationTime.IsZero() {
		a.TerminationTime = wire.NewTime(f.TerminationTime)
	}
	if len(f.Locations) > 0 {
		a.StoppedActions = stoppedActions(f, f.Locations[0])
	}
	if f.AnywhereCost != "" {
		a.AnywhereConfiguration = &wire.AnywhereConfiguration{Cost: wire.String(f.AnywhereCost)}
	}
	return a
}

// fleetStatus is a fleet's FleetStatus: a container fleet that runs
// nothing yet (CREATED) is NEW.
func fleetStatus(f *game.Fleet) string {
	if f.Status == game.FleetCreated {
		return wire.FleetStatusNew
	}
	return f.Status
}

// locationStates lists the fleet's locations, each ACTIVE: a custom
// location needs nothing provisioned.
func locationStates(names []string) []wire.LocationState {
	out := make([]wire.LocationState, 0, len(names))
	for _, n := range names {
		out = append(out, wire.LocationState{Location: wire.String(n), Status: wire.String(wire.FleetStatusActive)})
	}
	return out
}

// insertFleet writes a new fleet f with its tags and the event of its
// creation.
func (s *Service) insertFleet(tx store.Tx, f *game.Fleet, tags []wire.Tag) error {
	if err := tx.InsertFleet(f); err != nil {
		return err
	}
	if err := tx.PutTags(f.ARN, wire.GameTags(tags)); err != nil {
		return err
	}
	return s.recordEvent(tx, f.ID, "", wire.EventCodeFleetCreated, fmt.Sprintf("Fleet %s created.", f.ID))
}

// stoppedActions is a location's StoppedActions: AUTO_SCALING when
// StopFleetActions suspended it there.
func stoppedActions(f *game.Fleet, location string) []string {
	if c, ok := f.CapacityIn(location); ok && c.ScalingStopped {
		return []string{wire.FleetActionAutoScaling}
	}
	return nil
}
