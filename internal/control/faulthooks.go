package control

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/faults"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The hooks through which faults act, and their timer (faults.go).

// letGo releases what fault id holds: held starts become due now.
func (s *Service) letGo(id string) {
	now := s.clock()
	s.fx.mu.Lock()
	defer s.fx.mu.Unlock()
	for k, m := range s.fx.marks {
		if m.fault == id {
			delete(s.fx.marks, k)
		}
	}
	for gs, h := range s.fx.held {
		if h.fault == id {
			h.due = now
			s.fx.held[gs] = h
		}
	}
	for ref, f := range s.fx.refused {
		if f == id {
			delete(s.fx.refused, ref)
		}
	}
}

// sweepFaults is fault injection's timer: it ends faults whose Duration
// is over and writes the end events of those whose Count ran out; it
// sends the game session starts whose delay is over; it forgets what
// ended faults held.
func (s *Service) sweepFaults(ctx context.Context) error {
	if s.fx == nil {
		return nil
	}
	now := s.clock()
	s.fx.mu.Lock()
	ran := s.fx.ended
	s.fx.ended = nil
	s.fx.mu.Unlock()
	for _, f := range ran {
		if err := s.faultEndedEvent(ctx, f, "its Count is used up"); err != nil {
			return err
		}
	}
	for _, f := range s.fx.set.Expire(now) {
		s.letGo(f.ID)
		if err := s.faultEndedEvent(ctx, f, "its Duration is over"); err != nil {
			return err
		}
	}
	s.pruneMarks(now)
	return s.releaseStarts(ctx, now)
}

// pruneMarks forgets the marks of placements that have timed out by now
// (a queue's timeout is at most 600 s).
func (s *Service) pruneMarks(now time.Time) {
	s.fx.mu.Lock()
	defer s.fx.mu.Unlock()
	for k, m := range s.fx.marks {
		if m.until.Before(now.Add(-time.Hour)) {
			delete(s.fx.marks, k)
		}
	}
}

// releaseStarts sends the held game session starts that are due, to a
// session still ACTIVATING on a process that knows it is ready (one that
// does not is sent the start with its first heartbeat).
func (s *Service) releaseStarts(ctx context.Context, now time.Time) error {
	s.fx.mu.Lock()
	var due []string
	for id, h := range s.fx.held {
		if !now.Before(h.due) {
			due = append(due, id)
			delete(s.fx.held, id)
		}
	}
	s.fx.mu.Unlock()
	for _, id := range due {
		var gs *game.GameSession
		var p *game.Process
		err := s.view(ctx, func(tx store.Tx) error {
			var err error
			if gs, err = tx.GetGameSession(id); err != nil {
				return err
			}
			p, err = tx.GetProcess(gs.FleetID, gs.ComputeName, gs.ProcessID)
			return err
		})
		if game.IsKind(err, game.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if gs.Status == game.SessionActivating && p.Status == game.ProcessActive && p.GameSessionID == gs.ID {
			s.pushStart(p, gs)
		}
	}
	return nil
}

// refusePlacement is CreateGameSession's hook, in its transaction: a
// PLACEMENT_FAILURE fault on the fleet and location refuses the session
// with FleetCapacityExceeded. key names the call, so a transaction run
// again uses no more of the fault's Count.
func (s *Service) refusePlacement(fleetID, location, key string) error {
	if s.fx == nil {
		return nil
	}
	f, ended, ok := s.fx.set.Take(faults.PlacementFailure, faults.Scope{FleetID: fleetID, Location: location}, key, s.clock())
	if !ok {
		return nil
	}
	s.faultActed(f, ended, "CreateGameSession refused with FleetCapacityExceededException", "location", location)
	return game.Errorf(game.FleetCapacityExceeded,
		"No available server process in fleet %s location %s can host a new game session; retry after a wait (injected by Anylift fault %s)",
		fleetID, location, f.ID)
}

// startOrHold sends a new game session's start to its process, unless a
// PLACEMENT_DELAY fault holds it back: the fault sweep sends it once the
// delay is over, and until then the session stays ACTIVATING.
func (s *Service) startOrHold(p *game.Process, gs *game.GameSession) {
	if s.fx != nil {
		now := s.clock()
		f, ended, ok := s.fx.set.Take(faults.PlacementDelay, faults.Scope{FleetID: gs.FleetID, Location: gs.Location}, "", now)
		if ok {
			s.fx.mu.Lock()
			s.fx.held[gs.ID] = heldStart{due: now.Add(f.Delay), fault: f.ID}
			s.fx.mu.Unlock()
			s.faultActed(f, ended, "game session start held back", "game_session", gs.ID, "delay", f.Delay.String())
			return
		}
	}
	s.pushStart(p, gs)
}

// StartHeld reports whether a PLACEMENT_DELAY holds the start of game
// session id back (a heartbeat or a reconnect must not send it early):
// the server processes' hook (processes.Faults).
func (s *Service) StartHeld(id string) bool {
	if s.fx == nil {
		return false
	}
	s.fx.mu.Lock()
	defer s.fx.mu.Unlock()
	_, ok := s.fx.held[id]
	return ok
}

// placementHeld is the placer's hook: whether a fault keeps queue
// placement p off fleetID's location at now. A PLACEMENT_FAILURE keeps it
// off for the placement's life (or until the fault's Duration ends), a
// PLACEMENT_DELAY until it is Delay old. Each placement uses a fault's
// Count once, however often the placer tries it.
func (s *Service) placementHeld(p *game.Placement, fleetID, location string, now time.Time) bool {
	if s.fx == nil {
		return false
	}
	key := p.ID + " " + fleetID + " " + location
	s.fx.mu.Lock()
	m, marked := s.fx.marks[key]
	s.fx.mu.Unlock()
	if marked {
		return now.Before(m.until)
	}
	target := faults.Scope{FleetID: fleetID, Location: location}
	if f, ended, ok := s.fx.set.Take(faults.PlacementFailure, target, "", now); ok {
		m = faultMark{until: p.Deadline, fault: f.ID}
		if !f.Until.IsZero() && f.Until.Before(m.until) {
			m.until = f.Until
		}
		s.faultActed(f, ended, "queue placement kept off the fleet", "placement", p.ID, "location", location)
	} else if f, ended, ok := s.fx.set.Take(faults.PlacementDelay, target, "", now); ok {
		m = faultMark{until: p.StartTime.Add(f.Delay), fault: f.ID}
		s.faultActed(f, ended, "queue placement held back", "placement", p.ID, "location", location, "delay", f.Delay.String())
	} else {
		return false
	}
	s.fx.mu.Lock()
	s.fx.marks[key] = m
	s.fx.mu.Unlock()
	return now.Before(m.until)
}

// HealthReportLost is ProcessHeartbeat's hook (processes.Faults):
// whether a MISS_HEALTH_CHECKS fault loses this report of process ref.
func (s *Service) HealthReportLost(ref store.ProcessKey) bool {
	if s.fx == nil || s.fx.set.Empty() {
		return false
	}
	target := faults.Scope{FleetID: ref.FleetID, ComputeName: ref.ComputeName, ProcessID: ref.PID}
	f, ended, ok := s.fx.set.Take(faults.MissHealthChecks, target, "", s.clock())
	if ok {
		s.faultActed(f, ended, "health report lost", "process", ref.PID, "compute", ref.ComputeName)
	}
	return ok
}

// FaultRefusesConnection is the process endpoint's hook, before it admits
// a connection: an error when a DROP_CONNECTION fault keeps ref from
// reconnecting now.
func (s *Service) FaultRefusesConnection(ref store.ProcessKey) error {
	if s.fx == nil {
		return nil
	}
	s.fx.mu.Lock()
	id, ok := s.fx.refused[ref]
	s.fx.mu.Unlock()
	if !ok {
		return nil
	}
	f, in := s.fx.set.Get(id, s.clock())
	if !in {
		return nil
	}
	s.fx.set.Fire(id, 1)
	s.log.Warn("fault acted: a test, not a real failure", faultAttrs(f, "did", "process connection refused", "process", ref.PID)...)
	return game.Errorf(game.NotReady, "server process %s may not connect until %s: Anylift fault %s drops its connections",
		ref.PID, f.Until.Format(time.RFC3339), f.ID)
}

// faultActed logs that f acted; a fault whose Count ran out gets its end
// event from the next sweep.
func (s *Service) faultActed(f faults.Fault, ended bool, did string, attrs ...any) {
	s.log.Warn("fault acted: a test, not a real failure", faultAttrs(f, append([]any{"did", did}, attrs...)...)...)
	if ended {
		s.fx.mu.Lock()
		s.fx.ended = append(s.fx.ended, f)
		s.fx.mu.Unlock()
	}
}
