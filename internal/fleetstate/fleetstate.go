// Package fleetstate holds the live state of each fleet that placement
// decides on, in memory: every server process that has not ended, the
// ones free to host a new game session in the order they are claimed,
// and how many game sessions each compute has ACTIVATING. It is fed by the store's commit feed
// (Apply) and built at start-up from the store (Load), like the live game
// sessions of internal/live; the store consults it to claim a process
// (store.LiveProcesses) instead of querying for one.
//
// Only one server may feed it: the one writer of a SQLite store.
package fleetstate

import (
	"slices"
	"sync"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// State is the live state of every fleet. Its methods are safe for
// concurrent use: mu guards the map of fleets, each fleet's own lock
// guards what it holds.
type State struct {
	mu     sync.RWMutex
	fleets map[string]*fleet
}

// New returns an empty State.
func New() *State { return &State{fleets: map[string]*fleet{}} }

var _ store.LiveProcesses = (*State)(nil)

// fleet is one fleet's state, under mu.
type fleet struct {
	mu sync.Mutex
	// free holds the free processes not taken, per location, oldest
	// first; taken the processes set aside by Take until their claim
	// commits or they are returned.
	free  map[string]*freeList
	taken map[procKey]*entry
	// activating counts, per compute, the game sessions ACTIVATING
	// (sessions names their computes) and the processes taken (takes).
	activating map[string]int
	sessions   map[string]string
	takes      map[string]int
	// live holds the record of every process that has not ended, as
	// last committed.
	live map[procKey]*game.Process
}

// procKey names a process within its fleet.
type procKey struct{ compute, pid string }

func keyOf(p *game.Process) procKey { return procKey{p.ComputeName, p.PID} }

// entry is a process the fleet holds: its record as last committed and
// its place in the claim order.
type entry struct {
	p       *game.Process
	created int64 // store.Millis(p.CreationTime)
}

func newEntry(p *game.Process) *entry { return &entry{p: p, created: store.Millis(p.CreationTime)} }

// before is the claim order: creation time in milliseconds, then pID (as
// the store's ClaimFreeProcess orders), then compute.
func (e *entry) before(o *entry) bool {
	if e.created != o.created {
		return e.created < o.created
	}
	if e.p.PID != o.p.PID {
		return e.p.PID < o.p.PID
	}
	return e.p.ComputeName < o.p.ComputeName
}

// fleet returns the fleet with this id, adding it when absent.
func (s *State) fleet(id string) *fleet {
	s.mu.RLock()
	f := s.fleets[id]
	s.mu.RUnlock()
	if f != nil {
		return f
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f = s.fleets[id]; f == nil {
		f = &fleet{free: map[string]*freeList{}, taken: map[procKey]*entry{}, activating: map[string]int{},
			sessions: map[string]string{}, takes: map[string]int{}, live: map[procKey]*game.Process{}}
		s.fleets[id] = f
	}
	return f
}

// lookup returns the fleet with this id, or nil.
func (s *State) lookup(id string) *fleet {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fleets[id]
}

// Load builds the state from source, which visits what the store holds:
// the free processes (store.ProcessPut) and the live game sessions
// (store.SessionPut). Call it before the state is fed or consulted.
func (s *State) Load(source func(visit func(store.Change) error) error) error {
	return source(func(c store.Change) error {
		s.apply(c)
		return nil
	})
}

// Apply follows committed changes, in commit order: the commit hook.
func (s *State) Apply(changes []store.Change) {
	for _, c := range changes {
		s.apply(c)
	}
}

// Put follows one change: Apply for a single change, for a load that
// visits them one at a time.
func (s *State) Put(c store.Change) { s.apply(c) }

func (s *State) apply(c store.Change) {
	switch c.Kind {
	case store.ProcessPut:
		f := s.fleet(c.Process.FleetID)
		f.mu.Lock()
		f.put(c.Process)
		f.mu.Unlock()
	case store.SessionPut:
		f := s.fleet(c.Session.FleetID)
		f.mu.Lock()
		f.session(c.Session)
		f.mu.Unlock()
	case store.FleetDelete:
		s.mu.Lock()
		delete(s.fleets, c.ID)
		s.mu.Unlock()
	}
}

// put follows a committed write of process p. A taken process keeps its
// take, with the new record; otherwise p joins or leaves the free list.
// A process that hosts a session or has ended is never free again, and is
// dropped, taken or not.
func (f *fleet) put(p *game.Process) {
	k := keyOf(p)
	gone := p.GameSessionID != "" || p.Status == game.ProcessTerminated
	if p.Status == game.ProcessTerminated {
		delete(f.live, k)
	} else {
		f.live[k] = p
	}
	if e := f.taken[k]; e != nil {
		if gone {
			f.untake(k, e)
		} else {
			e.p = p
		}
		return
	}
	e := newEntry(p)
	l := f.list(p.Location)
	l.remove(e)
	if p.Free() {
		l.insert(e)
	}
}

// session follows a committed write of game session gs: the ACTIVATING
// count of its compute.
func (f *fleet) session(gs *game.GameSession) {
	compute, counted := f.sessions[gs.ID]
	now := gs.Status == game.SessionActivating && gs.ComputeName != ""
	switch {
	case now && !counted:
		f.sessions[gs.ID] = gs.ComputeName
		f.activating[gs.ComputeName]++
	case !now && counted:
		delete(f.sessions, gs.ID)
		f.dec(f.activating, compute)
	}
}

// untake ends the take of k.
func (f *fleet) untake(k procKey, e *entry) {
	delete(f.taken, k)
	f.dec(f.takes, e.p.ComputeName)
}

// dec decrements m[k], dropping it at zero.
func (f *fleet) dec(m map[string]int, k string) {
	if m[k] <= 1 {
		delete(m, k)
	} else {
		m[k]--
	}
}

// list returns the free list of a location, adding it when absent.
func (f *fleet) list(location string) *freeList {
	l := f.free[location]
	if l == nil {
		l = &freeList{}
		f.free[location] = l
	}
	return l
}

// Take implements store.LiveProcesses.
func (s *State) Take(fleetID, location string, maxActivating int) (*game.Process, bool) {
	f := s.lookup(fleetID)
	if f == nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.free[location]
	if l == nil {
		return nil, false
	}
	i := l.first(func(e *entry) bool {
		c := e.p.ComputeName
		return maxActivating <= 0 || f.activating[c]+f.takes[c] < maxActivating
	})
	if i < 0 {
		return nil, false
	}
	e := l.removeAt(i)
	f.taken[keyOf(e.p)] = e
	f.takes[e.p.ComputeName]++
	c := *e.p
	return &c, true
}

// Return implements store.LiveProcesses.
func (s *State) Return(p *game.Process) {
	f := s.lookup(p.FleetID)
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := keyOf(p)
	e := f.taken[k]
	if e == nil {
		return
	}
	f.untake(k, e)
	if e.p.Free() {
		f.list(e.p.Location).insert(e)
	}
}

// Count implements store.LiveProcesses.
func (s *State) Count(fleetID, location string, max int) int {
	f := s.lookup(fleetID)
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if l := f.free[location]; l != nil {
		return min(len(l.list), max)
	}
	return 0
}

// Free lists the free processes of a fleet in location that are not
// taken, in claim order, as pIDs on their computes ("compute/pid").
func (s *State) Free(fleetID, location string) []string {
	f := s.lookup(fleetID)
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	if l := f.free[location]; l != nil {
		for _, e := range l.list {
			out = append(out, e.p.ComputeName+"/"+e.p.PID)
		}
	}
	return out
}

// Activating reports how many game sessions of the fleet's compute are
// ACTIVATING, as the state counts them.
func (s *State) Activating(fleetID, compute string) int {
	f := s.lookup(fleetID)
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.activating[compute]
}

// Hosts reports whether the process pid on compute of the fleet hosts
// game session gameSessionID and has not ended, as last committed. A
// process hosts one game session in its life, so a yes stays true until
// the process ends; a no may be the state not knowing (ask the store).
func (s *State) Hosts(fleetID, compute, pid, gameSessionID string) bool {
	f := s.lookup(fleetID)
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.live[procKey{compute, pid}]
	return p != nil && p.GameSessionID == gameSessionID
}

// Get implements store.LiveProcesses.
func (s *State) Get(fleetID, compute, pid string) (*game.Process, bool) {
	f := s.lookup(fleetID)
	if f == nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.live[procKey{compute, pid}]
	if p == nil {
		return nil, false
	}
	c := *p
	c.LogPaths = slices.Clone(p.LogPaths)
	return &c, true
}
