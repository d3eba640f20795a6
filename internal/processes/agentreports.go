package processes

import (
	"context"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// What an agent reports about a server process it launched
// (ProcessReport.Kind).
const (
	// ReportInvalidPath: the launch path does not exist or cannot be run.
	ReportInvalidPath = "INVALID_PATH"
	// ReportExited: the process has exited.
	ReportExited = "EXITED"
	// ReportReadyTimeout: the process has run ReadyTimeout and is still
	// running, and the agent has not heard that it called ProcessReady.
	ReportReadyTimeout = "READY_TIMEOUT"
)

// ReadyTimeout is how long GameLift gives a launched process to call
// ProcessReady.
const ReadyTimeout = 5 * time.Minute

// How an exited process was stopped (ProcessReport.Stopped).
const (
	StoppedNone       = ""           // it exited on its own
	StoppedTerminated = "TERMINATED" // the agent sent SIGTERM and it exited in time
	StoppedKilled     = "KILLED"     // the agent had to kill it after SIGTERM
)

// ProcessReport is an agent's report about one server process it runs on
// a compute: GameLift has no API for it; Anylift serves it on its own
// path (DESIGN: docs/decisions.md "Agent reports").
type ProcessReport struct {
	FleetID, ComputeName string
	PID                  string // the GAMELIFT_SDK_PROCESS_ID the agent gave it
	Kind                 string // ReportInvalidPath, ReportExited or ReportReadyTimeout
	LaunchPath           string
	ExitCode             int    // when Kind is ReportExited; -1 when killed by a signal
	Signal               string // the signal that ended it, if any
	Stopped              string // StoppedNone, StoppedTerminated or StoppedKilled
}

// ReportOutcome answers a report: the event code written ("" for none)
// and, for an EXITED report, what the service saw the process do before
// it exited. The agent tells a process that ended as GameLift expects
// (replaced at once) from a crash loop (backed off) by these.
type ReportOutcome struct {
	EventCode string
	// ProcessReady: it called ProcessReady. HostedGameSession: a game
	// session was placed on it. ProcessEnding: it called ProcessEnding
	// (the service had not ended it for another reason first).
	ProcessReady, HostedGameSession, ProcessEnding bool
}

// ReportProcess records what an agent saw happen to a process as the
// fleet event GameLift writes for it, and
// returns the event code written with what the process had done. The service writes some of
// these events itself (a lost connection, missed health checks); a report
// never writes a second event for a process the service already ended with
// one:
//
//   - INVALID_PATH: SERVER_PROCESS_INVALID_PATH.
//   - a process still live in the service exited without ProcessEnding:
//     it ends now, with its game session, as SERVER_PROCESS_CRASHED, or
//     SERVER_PROCESS_FORCE_TERMINATED when the agent had to kill it (an
//     agent's graceful stop that it obeyed writes no event);
//   - a process that never connected and exited on its own: CRASHED;
//   - a process that called ProcessEnding and then exited with a non-zero
//     code: SERVER_PROCESS_TERMINATED_UNHEALTHY.
//
// Errors: NotFound when the fleet or the compute does not exist (the agent
// learns that they were deleted); InvalidRequest for a malformed report.
func (s *Service) ReportProcess(ctx context.Context, r ProcessReport) (ReportOutcome, error) {
	if err := checkReport(r); err != nil {
		return ReportOutcome{}, err
	}
	var out ReportOutcome
	var ended *game.Process
	err := s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetFleet(r.FleetID); err != nil {
			return err
		}
		if _, err := tx.GetCompute(r.FleetID, r.ComputeName); err != nil {
			return err
		}
		if r.Kind == ReportInvalidPath {
			out = ReportOutcome{EventCode: wire.EventCodeServerProcessInvalidPath}
			return s.ctl.RecordEvent(tx, r.FleetID, "", out.EventCode, fmt.Sprintf(
				"Server process could not be launched on compute %s: launch path %s does not exist or is not executable.", r.ComputeName, r.LaunchPath))
		}
		var err error
		if r.Kind == ReportReadyTimeout {
			out, ended, err = s.reportReadyTimeout(tx, r)
			return err
		}
		out, ended, err = s.reportExit(tx, r)
		return err
	})
	if err != nil {
		return ReportOutcome{}, err
	}
	if ended != nil {
		s.forget(refOf(ended))
	}
	return out, nil
}

func checkReport(r ProcessReport) error {
	switch {
	case r.FleetID == "" || r.ComputeName == "":
		return game.Errorf(game.InvalidRequest, "FleetId and ComputeName are required")
	case r.Kind != ReportInvalidPath && r.Kind != ReportExited && r.Kind != ReportReadyTimeout:
		return game.Errorf(game.InvalidRequest, "Kind must be %s, %s or %s", ReportInvalidPath, ReportExited, ReportReadyTimeout)
	case r.Kind != ReportInvalidPath && r.PID == "":
		return game.Errorf(game.InvalidRequest, "ProcessId is required for an %s report", r.Kind)
	case r.Stopped != StoppedNone && r.Stopped != StoppedTerminated && r.Stopped != StoppedKilled:
		return game.Errorf(game.InvalidRequest, "Stopped must be empty, %s or %s", StoppedTerminated, StoppedKilled)
	}
	return nil
}

// reportExit applies an EXITED report in tx; it returns the outcome and
// the process it ended, if any.
func (s *Service) reportExit(tx store.Tx, r ProcessReport) (ReportOutcome, *game.Process, error) {
	how := exitText(r)
	p, err := tx.GetProcess(r.FleetID, r.ComputeName, r.PID)
	if game.IsKind(err, game.NotFound) {
		if r.Stopped != StoppedNone {
			return ReportOutcome{}, nil, nil // stopped before it ever connected
		}
		out := ReportOutcome{EventCode: wire.EventCodeServerProcessCrashed}
		return out, nil, s.ctl.RecordEvent(tx, r.FleetID, r.PID, out.EventCode, fmt.Sprintf(
			"Server process %s on compute %s %s before it connected to the service.", r.PID, r.ComputeName, how))
	}
	if err != nil {
		return ReportOutcome{}, nil, err
	}
	out := ReportOutcome{
		ProcessReady:      !p.ActivationTime.IsZero(),
		HostedGameSession: p.GameSessionID != "",
		// endProcess marks every end but ProcessEnding's abnormal.
		ProcessEnding: p.Status == game.ProcessTerminated && !p.Abnormal,
	}
	if p.Status != game.ProcessTerminated {
		code, msg := wire.EventCodeServerProcessCrashed, "Server process "+p.PID+" on compute "+p.ComputeName+" "+how+" without calling ProcessEnding."
		switch r.Stopped {
		case StoppedTerminated:
			code, msg = "", ""
		case StoppedKilled:
			code, msg = wire.EventCodeServerProcessForceTerminated, "Server process "+p.PID+" on compute "+p.ComputeName+" did not stop when asked and was killed."
		}
		if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, code, msg); err != nil {
			return ReportOutcome{}, nil, err
		}
		out.EventCode = code
		return out, p, tx.PutProcess(p)
	}
	if r.ExitCode == 0 && r.Signal == "" {
		return out, nil, nil
	}
	seen, err := hasEventFor(tx, p)
	if err != nil || seen {
		return out, nil, err
	}
	out.EventCode = wire.EventCodeServerProcessTerminatedUnhealthy
	return out, nil, s.ctl.RecordEvent(tx, p.FleetID, p.PID, out.EventCode,
		"Server process "+p.PID+" on compute "+p.ComputeName+" "+how+" after ProcessEnding.")
}

// reportReadyTimeout applies a READY_TIMEOUT report in tx.
func (s *Service) reportReadyTimeout(tx store.Tx, r ProcessReport) (ReportOutcome, *game.Process, error) {
	p, err := tx.GetProcess(r.FleetID, r.ComputeName, r.PID)
	if game.IsKind(err, game.NotFound) {
		out := ReportOutcome{EventCode: wire.EventCodeServerProcessSdkInitializationTimeout}
		return out, nil, s.ctl.RecordEvent(tx, r.FleetID, r.PID, out.EventCode, fmt.Sprintf(
			"Server process %s on compute %s did not connect to the service within %s of its launch.", r.PID, r.ComputeName, ReadyTimeout))
	}
	if err != nil {
		return ReportOutcome{}, nil, err
	}
	out := ReportOutcome{ProcessReady: !p.ActivationTime.IsZero(), HostedGameSession: p.GameSessionID != ""}
	if p.Status != game.ProcessConnected {
		return out, nil, nil // ready, or ended already
	}
	out.EventCode = wire.EventCodeServerProcessProcessReadyTimeout
	if err := s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, out.EventCode, fmt.Sprintf(
		"Server process %s on compute %s did not call ProcessReady within %s of its launch.", p.PID, p.ComputeName, ReadyTimeout)); err != nil {
		return ReportOutcome{}, nil, err
	}
	return out, p, tx.PutProcess(p)
}

// hasEventFor reports whether the service wrote an event about p when it
// ended it (a lost connection, missed health checks).
func hasEventFor(tx store.Tx, p *game.Process) (bool, error) {
	page := store.Page{Limit: 100}
	for range 10 { // bounded: the event is written with the termination
		list, next, err := tx.ListEvents(p.FleetID, p.TerminationTime.Add(-time.Second), time.Time{}, page)
		if err != nil {
			return false, err
		}
		for _, e := range list {
			if e.ResourceID == p.PID {
				return true, nil
			}
		}
		if next == "" {
			return false, nil
		}
		page.Token = next
	}
	return false, nil
}

func exitText(r ProcessReport) string {
	if r.Signal != "" {
		return "was ended by signal " + r.Signal
	}
	return fmt.Sprintf("exited with code %d", r.ExitCode)
}
