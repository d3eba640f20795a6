package processes

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Fault injection (docs/fault-injection.md) where it meets server
// processes. The faults in force and their rules are internal/control's;
// a process's health report and a session's start ask them here through
// Faults, and a TERMINATE_PROCESS fault ends the processes it picks
// through ForceTerminate.

// Faults is what server processes need of fault injection
// (internal/control implements it).
type Faults interface {
	// HealthReportLost reports whether an injected fault loses this
	// health report of process k.
	HealthReportLost(k Ref) bool
	// StartHeld reports whether an injected fault holds the start of
	// game session id back (a heartbeat or a reconnect must not send it).
	StartHeld(id string) bool
}

// SetFaults makes health reports and session starts ask f whether a
// fault acts on them. Call it before the service serves requests; without
// it no fault acts here.
func (s *Service) SetFaults(f Faults) { s.faults = f }

func (s *Service) healthReportLost(k Ref) bool {
	return s.faults != nil && s.faults.HealthReportLost(k)
}

func (s *Service) startHeld(id string) bool {
	return s.faults != nil && s.faults.StartHeld(id)
}

// ForceTerminate ends, in one transaction, the live processes pick
// returns (pick runs inside it; its error ends the transaction with
// nothing done), each as GameLift force-terminates a process: its game
// session ends (TERMINATED, INTERRUPTED; ERROR when it never activated)
// and the fleet event SERVER_PROCESS_FORCE_TERMINATED says it was
// terminated by by. Once the transaction commits, each is sent
// TerminateProcess (onProcessTerminate). It returns the processes ended.
func (s *Service) ForceTerminate(ctx context.Context, by string, pick func(store.Tx) ([]*game.Process, error)) ([]*game.Process, error) {
	var ended []*game.Process
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if ended, err = pick(tx); err != nil {
			return err
		}
		for _, p := range ended {
			if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, wire.EventCodeServerProcessForceTerminated,
				"Server process "+p.PID+" on compute "+p.ComputeName+" was terminated by "+by+"."); err != nil {
				return err
			}
			if err := tx.PutProcess(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range ended {
		s.sendTerminate(p)
	}
	return ended, nil
}
