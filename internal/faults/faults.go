// Package faults holds the rules of Anylift's fault injection, a testing
// aid of Anylift's own (GameLift has none): the kinds of fault, what each
// may be narrowed to, and the set of faults in force, matched against what
// happens. It decides nothing about the records; internal/control applies
// what it matches. Standard library only.
package faults

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The kinds of fault.
const (
	// PlacementFailure: CreateGameSession answers FleetCapacityExceeded;
	// a queue placement finds no room on the fleet.
	PlacementFailure = "PLACEMENT_FAILURE"
	// PlacementDelay: a game session waits Delay before its process hears
	// of it (it stays ACTIVATING); a queue placement waits Delay before
	// it may land on the fleet.
	PlacementDelay = "PLACEMENT_DELAY"
	// MissHealthChecks: health reports of the processes are lost, so the
	// unhealthy timer runs out as it does for a silent process.
	MissHealthChecks = "MISS_HEALTH_CHECKS"
	// DropConnection: the processes' connections are cut now, without a
	// close frame (the SDKs reconnect); with a Duration their reconnects
	// are refused meanwhile.
	DropConnection = "DROP_CONNECTION"
	// TerminateProcess: the processes are ended now, as GameLift ends a
	// process: their game sessions end and they hear OnProcessTerminate.
	TerminateProcess = "TERMINATE_PROCESS"
	// ExpireReservations: RESERVED player sessions time out now.
	ExpireReservations = "EXPIRE_RESERVATIONS"
)

// Kinds lists every kind, in the order documentation shows them.
var Kinds = []string{PlacementFailure, PlacementDelay, MissHealthChecks, DropConnection, TerminateProcess, ExpireReservations}

// Immediate reports whether a kind acts once, when it is injected, on what
// its scope holds then (Count caps how many it acts on), rather than
// standing for what happens next (Count caps how many times it fires).
func Immediate(kind string) bool {
	return kind == DropConnection || kind == TerminateProcess || kind == ExpireReservations
}

// Scope names what a fault applies to: a fleet, narrowed by any of the
// other fields a kind allows (Narrowers). The same shape describes what
// happens (a target): a field left empty there is unknown and matches
// only a scope that leaves it empty too.
type Scope struct {
	FleetID, Location, ComputeName, ProcessID, GameSessionID, PlayerSessionID string
}

// Matches reports whether target is within s: every field s sets is equal
// in target.
func (s Scope) Matches(target Scope) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return s.FleetID == target.FleetID && eq(s.Location, target.Location) && eq(s.ComputeName, target.ComputeName) &&
		eq(s.ProcessID, target.ProcessID) && eq(s.GameSessionID, target.GameSessionID) &&
		eq(s.PlayerSessionID, target.PlayerSessionID)
}

// Scope fields, by the names the API uses.
const (
	FieldLocation        = "Location"
	FieldComputeName     = "ComputeName"
	FieldProcessID       = "ProcessId"
	FieldGameSessionID   = "GameSessionId"
	FieldPlayerSessionID = "PlayerSessionId"
)

// narrowers are the scope fields each kind accepts besides the fleet.
var narrowers = map[string][]string{
	PlacementFailure:   {FieldLocation},
	PlacementDelay:     {FieldLocation},
	MissHealthChecks:   {FieldComputeName, FieldProcessID},
	DropConnection:     {FieldLocation, FieldComputeName, FieldProcessID, FieldGameSessionID},
	TerminateProcess:   {FieldLocation, FieldComputeName, FieldProcessID, FieldGameSessionID},
	ExpireReservations: {FieldLocation, FieldComputeName, FieldProcessID, FieldGameSessionID, FieldPlayerSessionID},
}

// Narrowers lists the scope fields kind accepts besides the fleet.
func Narrowers(kind string) []string { return narrowers[kind] }

func (s Scope) fields() map[string]string {
	return map[string]string{FieldLocation: s.Location, FieldComputeName: s.ComputeName, FieldProcessID: s.ProcessID,
		FieldGameSessionID: s.GameSessionID, FieldPlayerSessionID: s.PlayerSessionID}
}

// MaxDuration bounds Duration and Delay: a fault is a test's, not a
// setting that outlives the test by days.
const MaxDuration = 24 * time.Hour

// Spec is a fault as asked for.
type Spec struct {
	Kind  string
	Scope Scope
	// Count: for a standing kind, how many times it fires; for an
	// immediate one, the most processes or player sessions it acts on.
	// 0: no limit.
	Count int
	// Duration: how long a standing fault stays in force (0: until Count
	// is used up or it is cleared). For DropConnection, how long the
	// dropped processes' reconnects are refused.
	Duration time.Duration
	// Delay is PlacementDelay's wait.
	Delay time.Duration
}

// Check reports what is wrong with s, in the API's field names.
func (s Spec) Check() error {
	allowed, ok := narrowers[s.Kind]
	switch {
	case !ok:
		return fmt.Errorf("Kind %q is not one of %v", s.Kind, Kinds)
	case s.Scope.FleetID == "":
		return fmt.Errorf("FleetId is required")
	case s.Count < 0:
		return fmt.Errorf("Count must not be negative")
	case s.Duration < 0 || s.Duration > MaxDuration:
		return fmt.Errorf("Duration must be between 0 and %s", MaxDuration)
	case s.Kind == PlacementDelay && (s.Delay <= 0 || s.Delay > MaxDuration):
		return fmt.Errorf("%s needs a Delay between 0 and %s", PlacementDelay, MaxDuration)
	case s.Kind != PlacementDelay && s.Delay != 0:
		return fmt.Errorf("Delay applies to %s only", PlacementDelay)
	case !Immediate(s.Kind) && s.Count == 0 && s.Duration == 0:
		return fmt.Errorf("%s needs a Count or a Duration (or both): it stands until one of them is used up", s.Kind)
	case s.Kind == TerminateProcess && s.Duration != 0, s.Kind == ExpireReservations && s.Duration != 0:
		return fmt.Errorf("%s acts once, when injected: it takes no Duration", s.Kind)
	}
	for name, v := range s.Scope.fields() {
		if v != "" && !slices.Contains(allowed, name) {
			return fmt.Errorf("%s cannot be narrowed by %s (it takes FleetId and %v)", s.Kind, name, allowed)
		}
	}
	return nil
}

// Fault is a fault in force.
type Fault struct {
	ID string
	// Spec is as asked for, but for Count: what is left of it.
	Spec
	Until   time.Time // zero: no end in time
	Created time.Time
	// Fired counts the times it acted (a placement refused or held, a
	// health report lost, a process or reservation acted on, a
	// reconnect refused).
	Fired int
	// counted says Count limits it (Spec.Count was not 0).
	counted bool
	// keys are the most recent keys it fired for (Take).
	keys []string
}

// InForce reports whether f applies at now.
func (f *Fault) InForce(now time.Time) bool {
	return (f.Until.IsZero() || now.Before(f.Until)) && (!f.counted || f.Count > 0)
}

// New makes a fault in force from spec, at now.
func New(id string, spec Spec, now time.Time) Fault {
	f := Fault{ID: id, Spec: spec, Created: now, counted: spec.Count > 0}
	if spec.Duration > 0 {
		f.Until = now.Add(spec.Duration)
	}
	return f
}

// keyMemory bounds the keys a fault remembers.
const keyMemory = 64

// Set is the faults in force, in the order they were added. The zero
// value is empty and ready; its methods are safe for concurrent use.
type Set struct {
	mu   sync.Mutex
	list []*Fault
	n    atomic.Int32 // len(list), read without the lock
}

// Add puts f in force.
func (s *Set) Add(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, &f)
	s.n.Store(int32(len(s.list)))
}

// Empty reports whether no fault is in force, without taking the lock:
// the hooks on hot paths (every health report) check it first.
func (s *Set) Empty() bool { return s.n.Load() == 0 }

// Take finds the first fault of kind in force at now whose scope holds
// target, counts that it fired, and returns a copy of it. A key seen by
// that fault lately (a transaction run again, say) matches again without
// using its Count. ended is true when this use finished its Count: the
// fault is then no longer in the Set.
func (s *Set) Take(kind string, target Scope, key string, now time.Time) (f Fault, ended, ok bool) {
	if s.Empty() {
		return Fault{}, false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.list {
		if x.Kind != kind || !x.InForce(now) || !x.Scope.Matches(target) {
			continue
		}
		if key != "" && slices.Contains(x.keys, key) {
			return *x, false, true
		}
		x.Fired++
		if key != "" {
			if len(x.keys) == keyMemory {
				x.keys = x.keys[1:]
			}
			x.keys = append(x.keys, key)
		}
		if x.counted {
			x.Count--
			if x.Count == 0 {
				s.removeAt(i)
				return *x, true, true
			}
		}
		return *x, false, true
	}
	return Fault{}, false, false
}

// Get returns the fault id if it is in force at now.
func (s *Set) Get(id string, now time.Time) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.list {
		if x.ID == id && x.InForce(now) {
			return *x, true
		}
	}
	return Fault{}, false
}

// Fire counts n more firings of fault id, if it is still there.
func (s *Set) Fire(id string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.list {
		if x.ID == id {
			x.Fired += n
		}
	}
}

// List returns the faults of fleetID (every fleet when empty) in force at
// now, oldest first.
func (s *Set) List(fleetID string, now time.Time) []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Fault
	for _, x := range s.list {
		if (fleetID == "" || x.Scope.FleetID == fleetID) && x.InForce(now) {
			out = append(out, *x)
		}
	}
	return out
}

// Clear removes fault id, or, when id is empty, every fault of fleetID
// (of every fleet when that is empty too), and returns what it removed.
func (s *Set) Clear(id, fleetID string) []Fault {
	return s.remove(func(f *Fault) bool {
		if id != "" {
			return f.ID == id
		}
		return fleetID == "" || f.Scope.FleetID == fleetID
	})
}

// Expire removes and returns the faults no longer in force at now.
func (s *Set) Expire(now time.Time) []Fault {
	return s.remove(func(f *Fault) bool { return !f.InForce(now) })
}

func (s *Set) remove(match func(*Fault) bool) []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Fault
	for i := 0; i < len(s.list); {
		if match(s.list[i]) {
			out = append(out, *s.list[i])
			s.removeAt(i)
			continue
		}
		i++
	}
	return out
}

// removeAt removes s.list[i]; s.mu is held.
func (s *Set) removeAt(i int) {
	s.list = slices.Delete(s.list, i, i+1)
	s.n.Store(int32(len(s.list)))
}
