package processes

import (
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// What the container fleets' removal of a game server container group
// does to its server processes (internal/containers asks it through
// control, containers.Control).

// EndCompute ends what is left of a compute's server processes, their
// game sessions TERMINATED (INTERRUPTED), and deregisters the compute,
// inside tx; it returns the processes ended, for ProcessesEnded once tx
// has committed.
func (s *Service) EndCompute(tx store.Tx, fleetID, name string) ([]*game.Process, error) {
	ended, err := liveProcessesOn(tx, fleetID, name)
	if err != nil {
		return nil, err
	}
	for _, p := range ended {
		if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, "", ""); err != nil {
			return nil, err
		}
		if err := tx.PutProcess(p); err != nil {
			return nil, err
		}
	}
	return ended, s.deregister(tx, fleetID, name)
}

// ProcessesEnded closes what connections are left of processes EndCompute
// ended. Call it after the change commits.
func (s *Service) ProcessesEnded(ended []*game.Process) {
	for _, p := range ended {
		s.forget(refOf(p))
	}
}

// TerminateCompute starts ending a compute's server processes inside tx:
// the game session each hosts goes TERMINATING (INTERRUPTED) until its
// process ends it (ProcessEnding) or is ended; a process hosting none is
// ended at once, so that nothing is placed on it. It returns every
// process to send TerminateProcess (TellTerminate, once tx has
// committed).
func (s *Service) TerminateCompute(tx store.Tx, fleetID, name string) ([]*game.Process, error) {
	procs, err := liveProcessesOn(tx, fleetID, name)
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		gs, err := hostedSession(tx, p)
		if err != nil {
			return nil, err
		}
		if gs == nil {
			if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, "", ""); err != nil {
				return nil, err
			}
			if err := tx.PutProcess(p); err != nil {
				return nil, err
			}
			continue
		}
		if gs.Status == game.SessionActive {
			gs.Status, gs.StatusReason = game.SessionTerminating, game.ReasonInterrupted
			if err := tx.UpdateGameSession(gs); err != nil {
				return nil, err
			}
		}
	}
	return procs, nil
}

// TellTerminate sends each process TerminateProcess with termination
// time at (onProcessTerminate; GetTerminationTime answers at). A process
// not connected now is told when it reconnects (ProcessResumed).
func (s *Service) TellTerminate(procs []*game.Process, at time.Time) {
	for _, p := range procs {
		s.push(refOf(p), &sdkwire.TerminateProcess{TerminationTime: at.UnixMilli()})
	}
}

// FinishCompute ends terminating compute c inside tx once none of its
// server processes is connected and hosting a live game session, or at
// once when force: a process still hosting one ends with
// SERVER_PROCESS_FORCE_TERMINATED, one whose connection went without
// ProcessEnding with SERVER_PROCESS_CRASHED, their sessions TERMINATED
// (keeping the reason TerminateCompute gave). c is then deregistered;
// done says whether it was, and ended are the processes ended, for
// ProcessesEnded once tx has committed.
func (s *Service) FinishCompute(tx store.Tx, c *game.Compute, force bool) (ended []*game.Process, done bool, err error) {
	procs, hosting, err := hostingOn(tx, c)
	if err != nil {
		return nil, false, err
	}
	for p := range hosting {
		if p.Connected && !force {
			return nil, false, nil // still has time to end it
		}
	}
	for _, p := range procs {
		code, msg := "", ""
		switch {
		case hosting[p] && p.Connected:
			code = wire.EventCodeServerProcessForceTerminated
			msg = fmt.Sprintf("Server process %s on compute %s did not end its game session by %s, its termination time after OnProcessTerminate, and was stopped.",
				p.PID, p.ComputeName, c.TerminationTime.UTC().Format(time.RFC3339))
		case hosting[p]:
			code = wire.EventCodeServerProcessCrashed
			msg = "Server process " + p.PID + " on compute " + p.ComputeName + " went away after OnProcessTerminate without calling ProcessEnding."
		}
		if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, code, msg); err != nil {
			return nil, false, err
		}
		if err := tx.PutProcess(p); err != nil {
			return nil, false, err
		}
	}
	if err := s.deregister(tx, c.FleetID, c.Name); err != nil && !game.IsKind(err, game.NotFound) {
		return nil, false, err
	}
	return procs, true, nil
}

// ComputeSettled reports, inside tx (a read), whether none of c's server
// processes is connected and hosting a live game session: FinishCompute
// would end it without force.
func (s *Service) ComputeSettled(tx store.Tx, c *game.Compute) (bool, error) {
	_, hosting, err := hostingOn(tx, c)
	for p := range hosting {
		if p.Connected {
			return false, err
		}
	}
	return err == nil, err
}

// hostingOn returns the server processes of c not yet ended, and those of
// them hosting a live game session.
func hostingOn(tx store.Tx, c *game.Compute) ([]*game.Process, map[*game.Process]bool, error) {
	procs, err := liveProcessesOn(tx, c.FleetID, c.Name)
	if err != nil {
		return nil, nil, err
	}
	hosting := map[*game.Process]bool{}
	for _, p := range procs {
		gs, err := hostedSession(tx, p)
		if err != nil {
			return nil, nil, err
		}
		if gs != nil {
			hosting[p] = true
		}
	}
	return procs, hosting, nil
}

// hostedSession returns the live game session p hosts, or nil.
func hostedSession(tx store.Tx, p *game.Process) (*game.GameSession, error) {
	if p.GameSessionID == "" {
		return nil, nil
	}
	gs, err := tx.GetGameSession(p.GameSessionID)
	if game.IsKind(err, game.NotFound) {
		return nil, nil
	}
	if err != nil || !gs.Live() {
		return nil, err
	}
	return gs, nil
}

// liveProcessesOn lists the server processes of a compute not yet ended.
func liveProcessesOn(tx store.Tx, fleetID, computeName string) ([]*game.Process, error) {
	var out []*game.Process
	page := store.Page{Limit: 1000}
	for {
		list, next, err := tx.ListProcesses(fleetID, "", page)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			if p.ComputeName == computeName && p.Status != game.ProcessTerminated {
				out = append(out, p)
			}
		}
		if next == "" {
			return out, nil
		}
		page.Token = next
	}
}
