// Package fleetstate holds the live state of each fleet that placement
// decides on, in memory: every server process that has not ended, the
// ones free to host a new game session in the order they are claimed,
// and how many game sessions each compute has ACTIVATING. It is fed by the store's commit feed
// (Apply) and built at start-up from the store (Load), like the live game
// sessions of internal/live; the store consults it to claim a process
// (store.LiveProcesses) instead of querying for one.
//
// Only the writer of every write of a fleet may feed it that fleet: the
// one server of a SQLite store, or on PostgreSQL the node that owns the
// fleet, which loads and drops fleets one at a time (Loading, Finish,
// Hide, DropFleet; internal/owned). There changes may come out of order,
// and the versions they carry say which is the newest
// (store.Change.Version).
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
	// horizon, when set, says changes may come out of order (SetHorizon).
	horizon store.Horizon
}

// New returns an empty State.
func New() *State { return &State{fleets: map[string]*fleet{}} }

// SetHorizon tells the state that changes may reach Apply out of order
// (PostgreSQL), and when the transactions begun before a moment have all
// reached it (store.Versions). Call it before the state is fed.
func (s *State) SetHorizon(h store.Horizon) { s.horizon = h }

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
	sessions   map[string]activating
	takes      map[string]int
	// live holds the record of every process that has not ended, as
	// last committed, and vers the version of each.
	live map[procKey]*game.Process
	vers map[procKey]int64
	// goneProcs and goneSessions remember, when changes may come out of
	// order, the versions of processes that ended and of sessions not
	// ACTIVATING.
	goneProcs    store.Versions[procKey, struct{}]
	goneSessions store.Versions[string, struct{}]
	// loading: the fleet is being loaded, or was lost (Loading, Hide);
	// nothing of it is answered.
	loading bool
}

// activating is a game session ACTIVATING on a compute, at a version.
type activating struct {
	compute string
	ver     int64
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
		f = s.newFleet()
		s.fleets[id] = f
	}
	return f
}

func (s *State) newFleet() *fleet {
	f := &fleet{free: map[string]*freeList{}, taken: map[procKey]*entry{}, activating: map[string]int{},
		sessions: map[string]activating{}, takes: map[string]int{}, live: map[procKey]*game.Process{}, vers: map[procKey]int64{}}
	if s.horizon != nil {
		f.goneProcs.SetHorizon(s.horizon)
		f.goneSessions.SetHorizon(s.horizon)
	}
	return f
}

// lookup returns the fleet with this id, or nil.
func (s *State) lookup(id string) *fleet {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fleets[id]
}

// answering returns the fleet with this id locked, or nil when the state
// does not have it or it is loading.
func (s *State) answering(id string) *fleet {
	f := s.lookup(id)
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if f.loading {
		f.mu.Unlock()
		return nil
	}
	return f
}

// Loading starts loading fleet id afresh: whatever the state held of it
// is dropped, and nothing of it is answered until Finish. Its rows as a
// snapshot of the store has them are then applied (Apply), and Finish
// applies what changed since and makes it answer.
func (s *State) Loading(id string) {
	f := s.newFleet()
	f.loading = true
	s.mu.Lock()
	s.fleets[id] = f
	s.mu.Unlock()
}

// Finish applies changes, made since the snapshot Loading was followed
// by, and makes fleet id answer.
func (s *State) Finish(id string, changes []store.Change) {
	s.Apply(changes)
	f := s.fleet(id)
	f.mu.Lock()
	f.loading = false
	f.mu.Unlock()
}

// Hide stops answering for fleet id at once (the node lost it), until
// DropFleet drops it or Loading loads it again.
func (s *State) Hide(id string) {
	s.mu.RLock()
	f := s.fleets[id]
	s.mu.RUnlock()
	if f != nil {
		f.mu.Lock()
		f.loading = true
		f.mu.Unlock()
	}
}

// DropFleet forgets fleet id.
func (s *State) DropFleet(id string) {
	s.mu.Lock()
	delete(s.fleets, id)
	s.mu.Unlock()
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
		f.put(c.Process, c.Version)
		f.prune()
		f.mu.Unlock()
	case store.SessionPut:
		f := s.fleet(c.Session.FleetID)
		f.mu.Lock()
		f.session(c.Session, c.Version)
		f.prune()
		f.mu.Unlock()
	case store.FleetDelete:
		s.mu.Lock()
		delete(s.fleets, c.ID)
		s.mu.Unlock()
	}
}

// newer reports whether a change at version v replaces what is held at
// version held: it is newer, or carries no version.
func newer(v, held int64) bool { return v == 0 || v > held }

// prune forgets the versions no change still to come can need.
func (f *fleet) prune() {
	if f.goneProcs.Keeps() {
		f.goneProcs.Prune()
		f.goneSessions.Prune()
	}
}

// put follows a committed write of process p at version v, unless the
// fleet holds a newer one. A taken process keeps its take, with the new
// record; otherwise p joins or leaves the free list. A process that hosts
// a session or has ended is never free again, and is dropped, taken or
// not.
func (f *fleet) put(p *game.Process, v int64) {
	k := keyOf(p)
	if held, ok := f.vers[k]; ok && !newer(v, held) {
		return
	}
	if held, _, ok := f.goneProcs.Get(k); ok && !newer(v, held) {
		return
	}
	gone := p.GameSessionID != "" || p.Status == game.ProcessTerminated
	if p.Status == game.ProcessTerminated {
		delete(f.live, k)
		delete(f.vers, k)
		f.goneProcs.Put(k, v, struct{}{})
	} else {
		f.live[k] = p
		f.vers[k] = v
		f.goneProcs.Delete(k)
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

// session follows a committed write of game session gs at version v,
// unless the fleet holds a newer one: the ACTIVATING count of its
// compute.
func (f *fleet) session(gs *game.GameSession, v int64) {
	a, counted := f.sessions[gs.ID]
	if counted && !newer(v, a.ver) {
		return
	}
	if held, _, ok := f.goneSessions.Get(gs.ID); ok && !newer(v, held) {
		return
	}
	now := gs.Status == game.SessionActivating && gs.ComputeName != ""
	switch {
	case now && !counted:
		f.sessions[gs.ID] = activating{gs.ComputeName, v}
		f.activating[gs.ComputeName]++
		f.goneSessions.Delete(gs.ID)
	case now:
		f.sessions[gs.ID] = activating{a.compute, v}
	case counted:
		delete(f.sessions, gs.ID)
		f.dec(f.activating, a.compute)
		fallthrough
	default:
		f.goneSessions.Put(gs.ID, v, struct{}{})
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
	f := s.answering(fleetID)
	if f == nil {
		return nil, false
	}
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
	f := s.answering(fleetID)
	if f == nil {
		return 0
	}
	defer f.mu.Unlock()
	if l := f.free[location]; l != nil {
		return min(len(l.list), max)
	}
	return 0
}

// Free lists the free processes of a fleet in location that are not
// taken, in claim order, as pIDs on their computes ("compute/pid").
func (s *State) Free(fleetID, location string) []string {
	f := s.answering(fleetID)
	if f == nil {
		return nil
	}
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
	f := s.answering(fleetID)
	if f == nil {
		return 0
	}
	defer f.mu.Unlock()
	return f.activating[compute]
}

// Hosts reports whether the process pid on compute of the fleet hosts
// game session gameSessionID and has not ended, as last committed. A
// process hosts one game session in its life, so a yes stays true until
// the process ends; a no may be the state not knowing (ask the store).
func (s *State) Hosts(fleetID, compute, pid, gameSessionID string) bool {
	f := s.answering(fleetID)
	if f == nil {
		return false
	}
	defer f.mu.Unlock()
	p := f.live[procKey{compute, pid}]
	return p != nil && p.GameSessionID == gameSessionID
}

// Get implements store.LiveProcesses.
func (s *State) Get(fleetID, compute, pid string) (*game.Process, bool) {
	f := s.answering(fleetID)
	if f == nil {
		return nil, false
	}
	defer f.mu.Unlock()
	p := f.live[procKey{compute, pid}]
	if p == nil {
		return nil, false
	}
	c := *p
	c.LogPaths = slices.Clone(p.LogPaths)
	return &c, true
}

// Version implements store.LiveProcesses.
func (s *State) Version(fleetID, compute, pid string) (int64, bool) {
	f := s.answering(fleetID)
	if f == nil {
		return 0, false
	}
	defer f.mu.Unlock()
	k := procKey{compute, pid}
	if f.live[k] == nil {
		return 0, false
	}
	return f.vers[k], true
}

// HasProcess reports whether the state holds process k as not ended,
// loading or not.
func (s *State) HasProcess(k store.ProcessKey) bool {
	f := s.lookup(k.FleetID)
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live[procKey{k.ComputeName, k.PID}] != nil
}
