package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// The seam between control and container fleets with their capacity and
// scaling (internal/containers): container group definitions, container
// fleets, their desired capacity, scaling policies, fleet actions and the
// scaler. That package reads and writes its own records (container group definitions, scaling
// policies, a container fleet's attributes and capacity) in the store,
// and asks the server processes (containers.Processes) and the computes
// (containers.Computes) what a group's removal does to them. What it
// needs of the rest of the control plane it asks through the methods
// below, each run inside the caller's transaction unless it says
// otherwise: a fleet event recorded, a fleet inserted or deleted as any
// fleet is, the protection policy's change recorded, whether this node
// owns a fleet (containers.Control). What control needs of it, it asks
// through Containers.

// Containers is container fleets and their scaler as control sees them.
type Containers interface {
	// RunScaler runs the scaler until ctx ends; Run runs it.
	RunScaler(ctx context.Context)
	// ScaleFleets evaluates the scaling policies of every fleet this
	// node scales once; Sweep runs it.
	ScaleFleets(ctx context.Context) error
	// SessionDemand tells the scaler a game session was placed on
	// fleetID, or found no server there.
	SessionDemand(fleetID string)
	// FleetCapacity is a container fleet's capacity in a location as
	// DescribeFleetCapacity shows it, read inside tx.
	FleetCapacity(tx store.Tx, f *game.Fleet, location string) (wire.FleetCapacity, error)
}

// SetContainers makes Run run c's scaler and Sweep its scaling, tells c
// of every session's demand, and answers a container fleet's capacity
// from c. Call it before Run; without it nothing is scaled.
func (s *Service) SetContainers(c Containers) { s.containers = c }

func (s *Service) runScaler(ctx context.Context) {
	if s.containers != nil {
		s.containers.RunScaler(ctx)
	}
}

func (s *Service) scaleFleets(ctx context.Context) error {
	if s.containers == nil {
		return nil
	}
	return s.containers.ScaleFleets(ctx)
}

func (s *Service) sessionDemand(fleetID string) {
	if s.containers != nil {
		s.containers.SessionDemand(fleetID)
	}
}

func (s *Service) containerCapacity(tx store.Tx, f *game.Fleet, location string) (wire.FleetCapacity, error) {
	if s.containers == nil {
		return wire.FleetCapacity{}, game.Errorf(game.Internal, "fleet %s is a container fleet, and no container fleet service is set", f.ID)
	}
	return s.containers.FleetCapacity(tx, f, location)
}

// RecordEvent adds a fleet event at the service clock's now inside tx;
// resourceID empty means the fleet.
func (s *Service) RecordEvent(tx store.Tx, fleetID, resourceID, code, message string) error {
	return s.recordEvent(tx, fleetID, resourceID, code, message)
}

// InsertFleet writes a new fleet f with its tags and the event of its
// creation inside tx.
func (s *Service) InsertFleet(tx store.Tx, f *game.Fleet, tags []wire.Tag) error {
	return s.insertFleet(tx, f, tags)
}

// RemoveFleet deletes fleet f inside tx as DeleteFleet does: its computes
// deregistered, its live sessions ended, FLEET_DELETED recorded, the
// record and its tags removed.
func (s *Service) RemoveFleet(tx store.Tx, f *game.Fleet) error { return s.deleteFleet(tx, f) }

// ProtectionChanged records FLEET_NEW_GAME_SESSION_PROTECTION_POLICY_UPDATED
// inside tx when f's protection policy is no longer old.
func (s *Service) ProtectionChanged(tx store.Tx, f *game.Fleet, old string) error {
	return s.protectionChanged(tx, f, old)
}
