package control

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/faults"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Fault injection, Anylift's own testing aid (docs/fault-injection.md):
// InjectFault puts a fault in force, or acts at once; the hooks in the
// operations ask the fault set whether something that happens is to fail.
// Faults live in this node's memory only: a restart ends them all, and
// no store write carries one. Every fault writes a GENERIC_EVENT on its
// fleet when it is injected and when it ends, and logs a warning each time
// it acts, so that nobody takes it for a real failure.

// faultState is what the service keeps for fault injection.
type faultState struct {
	set faults.Set

	mu sync.Mutex
	// marks hold a queue placement off a destination (placement + fleet
	// + location) until a time, for the fault that decided it.
	marks map[string]faultMark
	// held are game session starts a PLACEMENT_DELAY holds back.
	held map[string]heldStart
	// refused are the processes a DROP_CONNECTION with a Duration keeps
	// from reconnecting, by fault id.
	refused map[store.ProcessKey]string
	// ended are faults whose Count ran out, whose end event the next
	// sweep writes (they ran out inside other transactions).
	ended []faults.Fault
}

type faultMark struct {
	until time.Time
	fault string
}

type heldStart struct {
	due   time.Time
	fault string
}

func newFaultState() *faultState {
	return &faultState{marks: map[string]faultMark{}, held: map[string]heldStart{}, refused: map[store.ProcessKey]string{}}
}

// FaultInjection reports whether the service takes InjectFault.
func (s *Service) FaultInjection() bool { return s.fx != nil }

func faultsOff() error {
	return game.Errorf(game.InvalidRequest,
		"fault injection is off on this server: start anylift serve with --allow-fault-injection (anylift dev has it on)")
}

// InjectFault puts a fault in force (PLACEMENT_FAILURE, PLACEMENT_DELAY,
// MISS_HEALTH_CHECKS), or acts at once on what its scope holds now
// (DROP_CONNECTION, TERMINATE_PROCESS, EXPIRE_RESERVATIONS), and writes
// the fleet event that says so. Errors: InvalidRequest (a malformed fault,
// or fault injection off), NotFound (the fleet; or nothing in an
// immediate fault's scope to act on).
func (s *Service) InjectFault(ctx context.Context, in *extapi.InjectFaultInput) (*extapi.InjectFaultOutput, error) {
	if s.fx == nil {
		return nil, faultsOff()
	}
	spec, err := specOf(in.Fault)
	if err != nil {
		return nil, err
	}
	if err := spec.Check(); err != nil {
		return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
	}
	f := faults.New("fault-"+game.NewUUID(), spec, s.clock())
	var affected []string
	switch spec.Kind {
	case faults.DropConnection:
		affected, err = s.dropConnections(ctx, &f)
	case faults.TerminateProcess:
		affected, err = s.terminateProcesses(ctx, &f)
	case faults.ExpireReservations:
		affected, err = s.expireReservationsNow(ctx, &f)
	default:
		err = s.update(ctx, func(tx store.Tx) error {
			if err := s.faultFleet(tx, &f.Spec); err != nil {
				return err
			}
			return s.faultInjectedEvent(tx, f, nil)
		})
		if err == nil {
			s.fx.set.Add(f)
		}
	}
	if err != nil {
		return nil, err
	}
	if faults.Immediate(f.Kind) {
		s.log.Warn("fault injected: a test, not a real failure", faultAttrs(f, "affected", strings.Join(affected, ","))...)
	} else {
		s.log.Warn("fault injected: a test, not a real failure", faultAttrs(f)...)
	}
	return &extapi.InjectFaultOutput{Fault: faultOut(f), Affected: affected}, nil
}

// specOf reads a fault as the API gives it.
func specOf(in extapi.Fault) (faults.Spec, error) {
	spec := faults.Spec{Kind: in.Kind, Count: in.Count, Scope: faults.Scope{
		FleetID: game.ResourceID(in.FleetId, "fleet"), Location: in.Location, ComputeName: in.ComputeName,
		ProcessID: in.ProcessId, GameSessionID: in.GameSessionId, PlayerSessionID: in.PlayerSessionId,
	}}
	for _, d := range []struct {
		name, text string
		to         *time.Duration
	}{{"Duration", in.Duration, &spec.Duration}, {"Delay", in.Delay, &spec.Delay}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return spec, game.Errorf(game.InvalidRequest, "%s %q is not a duration such as 90s or 4m", d.name, d.text)
		}
		*d.to = v
	}
	return spec, nil
}

// faultFleet checks that the fault's fleet exists and has its location.
func (s *Service) faultFleet(tx store.Tx, spec *faults.Spec) error {
	f, err := tx.GetFleet(spec.Scope.FleetID)
	if err != nil {
		return err
	}
	// The fault is kept by the node serving the fleet: a node that does
	// not own it (its view of the leases behind, so the call was not sent
	// on) is refused here, and the call goes to the owner.
	if err := tx.FenceFleet(f.ID); err != nil {
		return err
	}
	if loc := spec.Scope.Location; loc != "" && loc != s.cfg.Account.Region && !slices.Contains(f.Locations, loc) {
		return game.Errorf(game.InvalidRequest, "fleet %s has no location %s", f.ID, loc)
	}
	return nil
}

// Connections is the process endpoint as fault injection sees it: Drop
// cuts a process's connections on this node without a close frame, as a
// failed network does, and reports whether it had one here. The endpoint
// asks FaultRefusesConnection before it admits a reconnect.
type Connections interface {
	Drop(k store.ProcessKey) bool
}

// SetConnections lets DROP_CONNECTION faults cut connections through c.
// Call it before serving requests; without it they are refused.
func (s *Service) SetConnections(c Connections) { s.conns = c }

// dropConnections cuts the connections of the connected processes in f's
// scope held by this node; with a Duration, their reconnects are refused
// until it is over. It answers the processes whose connection it cut.
func (s *Service) dropConnections(ctx context.Context, f *faults.Fault) ([]string, error) {
	if s.conns == nil {
		return nil, game.Errorf(game.Internal, "this server cannot drop process connections")
	}
	var procs []*game.Process
	err := s.update(ctx, func(tx store.Tx) error {
		if err := s.faultFleet(tx, &f.Spec); err != nil {
			return err
		}
		var err error
		if procs, err = s.faultProcesses(tx, f.Spec, func(p *game.Process) bool { return p.Connected }); err != nil {
			return err
		}
		if len(procs) == 0 {
			return game.Errorf(game.NotFound, "no connected server process of fleet %s is in the fault's scope", f.Scope.FleetID)
		}
		return s.faultInjectedEvent(tx, *f, pidsOf(procs))
	})
	if err != nil {
		return nil, err
	}
	if f.Duration > 0 {
		// In force before the drop, so that no reconnect slips in between.
		standing := faults.New(f.ID, faults.Spec{Kind: f.Kind, Scope: f.Scope, Duration: f.Duration}, f.Created)
		standing.Fired = len(procs)
		s.fx.set.Add(standing)
		s.fx.mu.Lock()
		for _, p := range procs {
			s.fx.refused[keyOf(p)] = f.ID
		}
		s.fx.mu.Unlock()
	}
	var dropped []string
	for _, p := range procs {
		if s.conns.Drop(keyOf(p)) {
			dropped = append(dropped, p.PID)
		}
	}
	f.Fired = len(dropped)
	return dropped, nil
}

// keyOf names process p as the fault state and the process endpoint do.
func keyOf(p *game.Process) store.ProcessKey {
	return store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
}

// terminateProcesses ends the live processes in f's scope as GameLift
// ends a process (their game sessions end, INTERRUPTED; the event
// SERVER_PROCESS_FORCE_TERMINATED names the fault) and sends each
// TerminateProcess (OnProcessTerminate).
func (s *Service) terminateProcesses(ctx context.Context, f *faults.Fault) ([]string, error) {
	if s.procs == nil {
		return nil, game.Errorf(game.Internal, "this server has no server process service to terminate processes through")
	}
	ended, err := s.procs.ForceTerminate(ctx, "Anylift fault "+f.ID+" (injected for a test, not a real failure)",
		func(tx store.Tx) ([]*game.Process, error) {
			if err := s.faultFleet(tx, &f.Spec); err != nil {
				return nil, err
			}
			procs, err := s.faultProcesses(tx, f.Spec, func(*game.Process) bool { return true })
			if err != nil {
				return nil, err
			}
			if len(procs) == 0 {
				return nil, game.Errorf(game.NotFound, "no live server process of fleet %s is in the fault's scope", f.Scope.FleetID)
			}
			return procs, s.faultInjectedEvent(tx, *f, pidsOf(procs))
		})
	if err != nil {
		return nil, err
	}
	f.Fired = len(ended)
	return pidsOf(ended), nil
}

// faultProcesses lists the live processes of spec's fleet in its scope
// that keep accepts, at most spec.Count of them (all when 0).
func (s *Service) faultProcesses(tx store.Tx, spec faults.Spec, keep func(*game.Process) bool) ([]*game.Process, error) {
	var out []*game.Process
	page := store.Page{Limit: 1000}
	for {
		list, next, err := tx.ListProcesses(spec.Scope.FleetID, "", page)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			target := faults.Scope{FleetID: p.FleetID, Location: p.Location, ComputeName: p.ComputeName, ProcessID: p.PID,
				GameSessionID: p.GameSessionID}
			if p.Status == game.ProcessTerminated || !spec.Scope.Matches(target) || !keep(p) {
				continue
			}
			out = append(out, p)
			if len(out) == spec.Count {
				return out, nil
			}
		}
		if next == "" {
			return out, nil
		}
		page.Token = next
	}
}

// expireReservationsNow times out the RESERVED player sessions in f's
// scope, at most f.Count of them (all when 0), as the reservation timer
// would: the seat is freed and the game server's AcceptPlayerSession is
// refused.
func (s *Service) expireReservationsNow(ctx context.Context, f *faults.Fault) ([]string, error) {
	var ids []string
	err := s.update(ctx, func(tx store.Tx) error {
		if err := s.faultFleet(tx, &f.Spec); err != nil {
			return err
		}
		var err error
		if ids, err = s.faultReservations(tx, f.Spec); err != nil {
			return err
		}
		if len(ids) == 0 {
			return game.Errorf(game.NotFound, "no RESERVED player session of fleet %s is in the fault's scope", f.Scope.FleetID)
		}
		if err := s.faultInjectedEvent(tx, *f, ids); err != nil {
			return err
		}
		now := s.clock()
		for _, id := range ids {
			if _, err := tx.SetPlayerSessionStatus(id, game.PlayerTimedOut, now); err != nil {
				return err
			}
		}
		return nil
	})
	f.Fired = len(ids)
	return ids, err
}

// faultReservations lists the RESERVED player sessions in spec's scope.
func (s *Service) faultReservations(tx store.Tx, spec faults.Spec) ([]string, error) {
	sc := spec.Scope
	var sessions []*game.GameSession
	switch {
	case sc.PlayerSessionID != "":
		ps, err := tx.GetPlayerSession(sc.PlayerSessionID)
		if err != nil {
			return nil, err
		}
		gs, err := tx.GetGameSession(ps.GameSessionID)
		if err != nil || ps.Status != game.PlayerReserved {
			return nil, err
		}
		if sc.Matches(sessionTarget(gs, ps.ID)) {
			return []string{ps.ID}, nil
		}
		return nil, nil
	case sc.GameSessionID != "":
		gs, err := tx.GetGameSession(sc.GameSessionID)
		if err != nil {
			return nil, err
		}
		sessions = []*game.GameSession{gs}
	default:
		var err error
		if sessions, err = tx.LiveGameSessions(sc.FleetID, sc.ComputeName); err != nil {
			return nil, err
		}
	}
	var ids []string
	for _, gs := range sessions {
		if !sc.Matches(sessionTarget(gs, "")) {
			continue
		}
		page := store.Page{Limit: 1000}
		for {
			list, next, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: gs.ID, Status: game.PlayerReserved}, page)
			if err != nil {
				return nil, err
			}
			for _, ps := range list {
				ids = append(ids, ps.ID)
				if len(ids) == spec.Count {
					return ids, nil
				}
			}
			if next == "" {
				break
			}
			page.Token = next
		}
	}
	return ids, nil
}

func sessionTarget(gs *game.GameSession, playerSessionID string) faults.Scope {
	return faults.Scope{FleetID: gs.FleetID, Location: gs.Location, ComputeName: gs.ComputeName, ProcessID: gs.ProcessID,
		GameSessionID: gs.ID, PlayerSessionID: playerSessionID}
}

func pidsOf(list []*game.Process) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, p.PID)
	}
	return out
}

// ListFaults lists the faults in force, of one fleet or of all.
func (s *Service) ListFaults(ctx context.Context, in *extapi.ListFaultsInput) (*extapi.ListFaultsOutput, error) {
	if s.fx == nil {
		return nil, faultsOff()
	}
	out := &extapi.ListFaultsOutput{Faults: []extapi.Fault{}}
	for _, f := range s.fx.set.List(game.ResourceID(in.FleetId, "fleet"), s.clock()) {
		out.Faults = append(out.Faults, faultOut(f))
	}
	return out, nil
}

// ClearFaults ends fault FaultId, or every fault of FleetId, or every
// fault; what they hold (game session starts, queue placements, refused
// reconnects) is let go. NotFound for a FaultId not in force.
func (s *Service) ClearFaults(ctx context.Context, in *extapi.ClearFaultsInput) (*extapi.ClearFaultsOutput, error) {
	if s.fx == nil {
		return nil, faultsOff()
	}
	cleared := s.fx.set.Clear(in.FaultId, game.ResourceID(in.FleetId, "fleet"))
	if in.FaultId != "" && len(cleared) == 0 {
		return nil, game.Errorf(game.NotFound, "fault %s is not in force", in.FaultId)
	}
	out := &extapi.ClearFaultsOutput{Faults: []extapi.Fault{}}
	for _, f := range cleared {
		out.Faults = append(out.Faults, faultOut(f))
	}
	return out, s.endFaults(ctx, cleared, "it was cleared")
}

// endFaults lets go what faults cleared held and writes their end events.
func (s *Service) endFaults(ctx context.Context, cleared []faults.Fault, why string) error {
	for _, f := range cleared {
		s.letGo(f.ID)
		if err := s.faultEndedEvent(ctx, f, why); err != nil {
			return err
		}
	}
	return nil
}

// FleetMoved ends the faults of fleetID, which this node no longer owns
// (fleet ownership): a fault acts on the node that serves its fleet, and
// that is now another node. Each writes its end event.
func (s *Service) FleetMoved(ctx context.Context, fleetID string) error {
	if s.fx == nil || fleetID == "" {
		return nil
	}
	return s.endFaults(ctx, s.fx.set.Clear("", fleetID), "its fleet moved to another node, where it does not act")
}
