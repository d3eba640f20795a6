package control

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The seam between control and game sessions with their player sessions
// (internal/sessions: the session operations, create, describe, update,
// terminate and search; player sessions reserved and described; seats
// decided in memory; reads answered from memory, encoded). That package
// reads and writes game and player sessions in the store; what it needs
// of the rest of the control plane it asks through the methods below
// (sessions.Control), each run inside the caller's transaction unless it
// says otherwise: the fleet an operation names, directly or by an alias
// (AliasFleet, queueing.go), fault injection's refusal of a new session,
// a new session sent to its process and its demand told to the scaler; a
// session's process asked to end it asks of internal/processes directly
// (sessions.Processes). Control
// needs nothing of it: a queue placement's session is made there at the
// queues' request (queueing.Sessions). A session's end, whoever ends it,
// is internal/processes' (sessionend.go), and so is what its process is
// sent (sessionpush.go) and what the process does to its player sessions,
// with the reservation timer (players.go).

// FleetFor returns the fleet an operation names, read inside tx: by
// fleet id or ARN, or by alias id or ARN, exactly one of them. Errors:
// InvalidRequest (both or neither), NotFound, TerminalRoutingStrategy.
func (s *Service) FleetFor(tx store.Tx, fleetIDOrARN, aliasIDOrARN string) (*game.Fleet, error) {
	return s.fleetFor(tx, fleetIDOrARN, aliasIDOrARN)
}

// FaultKey names one call for fault injection, so that a transaction run
// again uses no more of a fault's Count; empty when faults are off.
func (s *Service) FaultKey() string { return s.faultKey() }

// RefuseSession is CreateGameSession's fault hook, inside its
// transaction: FleetCapacityExceeded when a PLACEMENT_FAILURE fault on
// the fleet and location refuses the call named by key.
func (s *Service) RefuseSession(fleetID, location, key string) error {
	return s.refusePlacement(fleetID, location, key)
}

// SessionCreated sends game session gs, just created on proc by
// CreateGameSession, to its process (unless a PLACEMENT_DELAY fault holds
// it back) and tells the scaler of the demand. Call it after the session
// commits.
func (s *Service) SessionCreated(gs *game.GameSession, proc *game.Process) {
	s.startOrHold(proc, gs)
	s.sessionDemand(gs.FleetID)
}

// SessionDemand tells the scaler a game session found no free server
// process on fleetID: a scaled fleet grows now.
func (s *Service) SessionDemand(fleetID string) { s.sessionDemand(fleetID) }
