// Package live holds the live game sessions of every fleet in memory:
// every session that has not ended (ACTIVATING, ACTIVE, TERMINATING),
// indexed for the questions DescribeGameSessions and SearchGameSessions
// ask, so that they are answered without the store.
//
// The store feeds it: after each write transaction commits, and before
// the writer's caller hears "yes", the store hands Apply the changes the
// transaction made to game sessions and fleets, transactions in commit
// order (sqldb.DB.SetCommitHook). So every acknowledged write is visible
// here, a failed one never is, and the state is the store's as of its
// last commit. At start-up Load rebuilds it from the store.
//
// The memory is exactly as fresh as the store only when every write to
// the store passes through this process's feed: one node on SQLite. With
// several nodes sharing PostgreSQL, other nodes' writes would not be
// seen, so the server does not build it there (docs/architecture.md).
//
// Answers are records shared with other readers and never changed once
// handed out: a change replaces a session's record with a new one.
package live

import (
	"sync"
	"sync/atomic"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Sessions is the live game sessions of every fleet. Its methods are safe
// for concurrent use: reads share a lock, Apply takes it alone.
type Sessions struct {
	mu     sync.RWMutex
	fleets map[string]*fleet
	byID   map[string]*entry
	strs   interner
	// holds are the seats held by reservations in flight (seats.go).
	holds holds
}

// fleet is one fleet's live sessions and their indexes.
type fleet struct {
	// exists: the fleet is in the store. A fleet the store does not have
	// is answered by the store (NotFound), never from memory.
	exists bool
	// ended: the fleet has sessions that ended, which only the store
	// holds, so pages that may include them are the store's to answer.
	ended bool

	live      set                        // every live session
	active    set                        // ACTIVE ones
	open      set                        // ACTIVE ones with a free seat
	locations map[string]*set            // ACTIVE ones by location
	props     map[string]map[string]*set // ACTIVE ones by searchable property key and value
}

// entry is one live session. What a search tests on every candidate is
// held in the entry itself (seats, property references), so that
// testing it touches the entry and its property list, not the record.
type entry struct {
	pos
	s        *game.GameSession // never changed once stored: replaced
	fleet    *fleet
	cur, max int32 // seats: s.CurrentPlayerSessionCount, s.MaximumPlayerSessionCount
	// props are the searchable properties of an ACTIVE session as the
	// store indexes them (one value per key, the last given), each as its
	// key and the fleet's set of sessions with that value.
	props []prop
	// enc keeps the session's answers, encoded on first read (encoded.go):
	// nil until then, and dropped whenever s is replaced.
	enc atomic.Pointer[answers]
}

// prop is one searchable property of an ACTIVE session: its key and the
// set of the fleet's sessions with its value (whose val is the value).
type prop struct {
	key string
	set *set
}

// New returns an empty Sessions.
func New() *Sessions {
	return &Sessions{fleets: map[string]*fleet{}, byID: map[string]*entry{}, strs: interner{m: map[string]string{}}}
}

// Len returns the number of live sessions held.
func (l *Sessions) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.byID)
}

// Load adds what a store's load visits (sqldb.DB.LoadLive), through
// Apply; a source is a function that calls visit for each change.
func (l *Sessions) Load(source func(visit func(store.Change) error) error) error {
	const batch = 1024
	buf := make([]store.Change, 0, batch)
	err := source(func(c store.Change) error {
		buf = append(buf, c)
		if len(buf) == batch {
			l.Apply(buf)
			buf = buf[:0]
		}
		return nil
	})
	if err == nil {
		l.Apply(buf)
	}
	return err
}

// Apply applies the changes of committed transactions, in order.
func (l *Sessions) Apply(changes []store.Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range changes {
		switch c.Kind {
		case store.FleetPut:
			f := l.fleet(c.ID)
			f.exists = true
			f.ended = f.ended || c.Ended
		case store.FleetDelete:
			l.fleet(c.ID).exists = false
		case store.SessionPut:
			l.put(c.PK, c.Session)
		case store.SessionSeats:
			l.seats(c.ID, c.Seats)
			l.holds.counted(c.ID, c.Held)
		}
	}
}

// fleet returns the fleet with this id, adding it (not existing) when
// unknown.
func (l *Sessions) fleet(id string) *fleet {
	f := l.fleets[id]
	if f == nil {
		f = &fleet{locations: map[string]*set{}, props: map[string]map[string]*set{}}
		l.fleets[l.strs.get(id)] = f
	}
	return f
}

// put stores session s (row key pk) as written.
func (l *Sessions) put(pk int64, s *game.GameSession) {
	old := l.byID[s.ID]
	if old != nil {
		old.fleet.unindex(old)
		old.fleet.live.remove(old)
		delete(l.byID, s.ID)
	}
	f := l.fleet(s.FleetID)
	if !s.Live() {
		f.ended = true
		return
	}
	e := &entry{pos: pos{store.Millis(s.CreationTime), pk}, s: l.strs.session(s), fleet: f,
		cur: int32(s.CurrentPlayerSessionCount), max: int32(s.MaximumPlayerSessionCount)}
	l.byID[e.s.ID] = e
	f.live.insert(e)
	f.index(e)
}

// seats sets the seat count of session id, when it is live.
func (l *Sessions) seats(id string, n int) {
	e := l.byID[id]
	if e == nil || e.s.CurrentPlayerSessionCount == n {
		return
	}
	wasOpen := e.open()
	s := *e.s
	s.CurrentPlayerSessionCount = n
	e.s, e.cur = &s, int32(n)
	e.enc.Store(nil)
	if e.s.Status == game.SessionActive && wasOpen != e.open() {
		if wasOpen {
			e.fleet.open.remove(e)
		} else {
			e.fleet.open.insert(e)
		}
	}
}

// open is hasAvailablePlayerSessions.
func (e *entry) open() bool { return e.cur < e.max }

// prop returns the set of the fleet's sessions sharing e's value of
// searchable property key (nil when e lacks it).
func (e *entry) prop(key string) *set {
	for _, p := range e.props {
		if p.key == key {
			return p.set
		}
	}
	return nil
}

// searchable returns the properties the store indexes for search: keys
// without '.', one value per key (the last given), in the order keys
// first appear.
func searchable(props []game.Property) []game.Property {
	if plain(props) {
		return props
	}
	var out []game.Property
	for _, p := range props {
		if game.Searchable(p.Key) {
			out = game.SetProperty(out, p)
		}
	}
	return out
}

// plain reports whether every key is searchable and given once.
func plain(props []game.Property) bool {
	for i, p := range props {
		if !game.Searchable(p.Key) {
			return false
		}
		for _, q := range props[:i] {
			if q.Key == p.Key {
				return false
			}
		}
	}
	return true
}

// index adds e to the fleet's indexes of ACTIVE sessions.
func (f *fleet) index(e *entry) {
	if e.s.Status != game.SessionActive {
		return
	}
	f.active.insert(e)
	if e.open() {
		f.open.insert(e)
	}
	loc := f.locations[e.s.Location]
	if loc == nil {
		loc = &set{}
		f.locations[e.s.Location] = loc
	}
	loc.insert(e)
	props := searchable(e.s.Properties)
	e.props = make([]prop, len(props))
	for i, p := range props {
		vals := f.props[p.Key]
		if vals == nil {
			vals = map[string]*set{}
			f.props[p.Key] = vals
		}
		vs := vals[p.Value]
		if vs == nil {
			vs = &set{val: p.Value}
			vals[p.Value] = vs
		}
		vs.insert(e)
		e.props[i] = prop{key: p.Key, set: vs}
	}
}

// unindex takes e out of the fleet's indexes of ACTIVE sessions.
func (f *fleet) unindex(e *entry) {
	if e.s.Status != game.SessionActive {
		return
	}
	f.active.remove(e)
	f.open.remove(e)
	if loc := f.locations[e.s.Location]; loc != nil {
		loc.remove(e)
		if loc.Len() == 0 {
			delete(f.locations, e.s.Location)
		}
	}
	for _, p := range e.props {
		p.set.remove(e)
		if p.set.Len() == 0 {
			vals := f.props[p.key]
			delete(vals, p.set.val)
			if len(vals) == 0 {
				delete(f.props, p.key)
			}
		}
	}
	e.props = nil
}
