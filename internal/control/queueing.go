package control

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The seam between control and the game session queues with their
// placements (internal/queueing). The queues read and write their own
// records (queues, placements) in the store; what they need of the rest
// of the control plane they ask through the methods below
// (queueing.Control), each run inside the caller's transaction unless it
// says otherwise: a placed game session pushed to its process and its
// demand told to the scaler, an alias resolved, whether this node owns a
// fleet and a wake for the node that does, fault holds, seats reserved
// for a placement's players, an event in the outbox. A placement's game
// session is made and abandoned by internal/sessions, and an abandoned
// session's process told to end by internal/processes, which the queues
// ask directly (queueing.Sessions, queueing.Processes). What control needs of the queues it asks through
// Queues.

// Queues is the queues and their placer as control sees them.
type Queues interface {
	// RunPlacer runs the placer until ctx ends; Run runs it.
	RunPlacer(ctx context.Context)
	// SweepPlacements times placements out and retries those waiting
	// for capacity; the sweeps run it before the matchmaker's step.
	SweepPlacements(ctx context.Context) error
}

// SetQueues makes Run run q's placer and the sweeps its placement sweep.
// Call it before Run; without it nothing is placed from a queue. A
// provisional session's activation and end reach the queues from the
// server processes (processes.Queues).
func (s *Service) SetQueues(q Queues) { s.queues = q }

func (s *Service) runPlacer(ctx context.Context) {
	if s.queues != nil {
		s.queues.RunPlacer(ctx)
	}
}

func (s *Service) sweepPlacements(ctx context.Context) error {
	if s.queues == nil {
		return nil
	}
	return s.queues.SweepPlacements(ctx)
}

// SessionPlaced sends game session gs, created for a placement on proc
// (queueing.Sessions), to its process and tells the scaler of the demand. Call it after
// the session commits.
func (s *Service) SessionPlaced(gs *game.GameSession, proc *game.Process) {
	s.pushStart(proc, gs)
	s.sessionDemand(gs.FleetID)
}

// AliasFleet returns the fleet id a SIMPLE alias (id or ARN) points to,
// read inside tx: NotFound for no such alias, TerminalRoutingStrategy for
// a TERMINAL one.
func (s *Service) AliasFleet(tx store.Tx, aliasIDOrARN string) (string, error) {
	return s.resolveAlias(tx, aliasIDOrARN)
}

// Owns reports whether this node acts for fleetID: it owns it, or
// ownership is off.
func (s *Service) Owns(fleetID string) bool { return s.owns(fleetID) }

// WakeOwner wakes the placer of the node owning fleetID, and only its
// placer: the placement is that node's to place.
func (s *Service) WakeOwner(fleetID string) { s.wakeOwner(fleetID, false) }

// PlacementHeld reports whether an injected fault keeps queue placement
// p off fleetID's location at now (faulthooks.go).
func (s *Service) PlacementHeld(p *game.Placement, fleetID, location string, now time.Time) bool {
	return s.placementHeld(p, fleetID, location, now)
}

// PublishPlacementEvent appends a queue placement event
// (DetailQueuePlacement) of type typ to the outbox inside tx; resource is
// the queue's ARN, target its NotificationTarget.
func (s *Service) PublishPlacementEvent(tx store.Tx, typ, resource, target string, detail any) error {
	_, err := s.publish(tx, DetailQueuePlacement, typ, resource, target, detail)
	return err
}

// ReservePlacedSeats reserves a seat in game session gameSessionID for
// each of a placement's desired players (at least one), all or none,
// inside tx: RESERVED
// player sessions created now, in the order given, counting reservations
// younger than the reservation timeout.
func (s *Service) ReservePlacedSeats(tx store.Tx, gameSessionID string, players []game.DesiredPlayer) ([]*game.PlayerSession, error) {
	seats := make([]*game.PlayerSession, 0, len(players))
	for _, d := range players {
		seats = append(seats, game.NewPlayerSession(d.PlayerID, d.PlayerData, s.clock()))
	}
	return seats, tx.ReserveSeats(gameSessionID, seats, seats[0].CreationTime.Add(-s.cfg.ReservationTimeout))
}
