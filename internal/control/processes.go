package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The seam between control and the server processes with their side of
// a game session (internal/processes: a process's connection, activation
// and health, its session's activation and end however it comes, the
// pushes to it, AcceptPlayerSession and RemovePlayerSession, the agents'
// reports, which node holds its connection, and the timers of all
// these). That package reads and writes processes, game sessions and
// player sessions in the store. Of control it asks a fleet event
// (processes.Control: RecordEvent, containers.go) and fault injection's
// hooks on a health report and a held start (processes.Faults:
// HealthReportLost and StartHeld, faulthooks.go), inside the caller's
// transaction unless they say otherwise; the rest it asks of the queues
// and the computes directly (processes.Queues, processes.Computes). What
// control needs of it, it asks through Processes. The sessions, the
// queues, FlexMatch and the container fleets reach it directly too, each
// through its own Processes seam.

// Processes is the server processes as control sees them.
type Processes interface {
	// The process timers, run among the sweeps in this order:
	// ReclaimStranded and SweepOrphans after the heartbeat, then
	// SweepProcesses, SweepActivations and ExpireReservations; after the
	// placements and the matchmaker, PruneHoldings.
	ReclaimStranded(ctx context.Context) error
	SweepOrphans(ctx context.Context) error
	SweepProcesses(ctx context.Context) error
	SweepActivations(ctx context.Context) error
	ExpireReservations(ctx context.Context) error
	PruneHoldings(ctx context.Context) error
	// EndFleetSessions ends the live game sessions of a fleet being
	// deleted, inside tx.
	EndFleetSessions(tx store.Tx, fleetID string) error
	// PushStart sends a session's start to the process it was placed on
	// (or at its first heartbeat): a session created once no
	// PLACEMENT_DELAY holds it back, or a held start now due
	// (faulthooks.go), or a placement's session (queueing.go). Called
	// after the session commits.
	PushStart(p *game.Process, gs *game.GameSession)
	// ForceTerminate ends the live processes pick returns inside one
	// transaction (pick runs in it), each with its session and the event
	// SERVER_PROCESS_FORCE_TERMINATED saying it was terminated by by, and
	// sends each TerminateProcess once it commits: a TERMINATE_PROCESS
	// fault (faults.go). It returns the processes ended.
	ForceTerminate(ctx context.Context, by string, pick func(store.Tx) ([]*game.Process, error)) ([]*game.Process, error)
}

// SetProcesses makes the sweeps run p's timers, and a fleet's deletion,
// a new session's start and a TERMINATE_PROCESS fault go through p. Call it before Run and before serving requests.
func (s *Service) SetProcesses(p Processes) { s.procs = p }

func (s *Service) endFleetSessions(tx store.Tx, fleetID string) error {
	if s.procs == nil {
		return game.Errorf(game.Internal, "fleet %s: no server process service is set", fleetID)
	}
	return s.procs.EndFleetSessions(tx, fleetID)
}

// pushStart sends gs's start to p (Processes.PushStart) when the
// processes are set; without them no process is reached.
func (s *Service) pushStart(p *game.Process, gs *game.GameSession) {
	if s.procs != nil {
		s.procs.PushStart(p, gs)
	}
}

// processTimer runs the process timer t when the processes are set.
func (s *Service) processTimer(t func(Processes, context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if s.procs == nil {
			return nil
		}
		return t(s.procs, ctx)
	}
}
