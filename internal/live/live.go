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
// The memory is exactly as fresh as the store only for fleets every write
// of which passes through this process's feed: every fleet of one node on
// SQLite; on PostgreSQL, the fleets this node owns (fleet ownership),
// which internal/owned loads one at a time (Loading, Finish) and drops
// (Hide, DropFleet) as the node gains and loses them. There transactions
// commit concurrently and may reach Apply out of order: each change
// carries its row's version, and Apply keeps the newest (docs/architecture.md).
//
// Answers are records shared with other readers and never changed once
// handed out: a change replaces a session's record with a new one.
package live

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
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
	// gone remembers, when changes may come out of order (SetHorizon),
	// the versions of sessions not held: ended ones, and seat counts that
	// came before their session.
	gone store.Versions[string, goneSession]
}

// goneSession is what Sessions remembers of a session it does not hold:
// it ended, or (not ended) its seat count, changed by a write newer than
// any put of it seen yet.
type goneSession struct {
	ended bool
	seats int
}

// fleet is one fleet's live sessions and their indexes.
type fleet struct {
	// exists: the fleet is in the store. A fleet the store does not have
	// is answered by the store (NotFound), never from memory.
	exists bool
	// ended: the fleet has sessions that ended, which only the store
	// holds, so pages that may include them are the store's to answer.
	ended bool
	// loading: the fleet is being loaded, or was lost (Loading, Hide):
	// nothing of it is answered from memory.
	loading bool

	live      set                        // every live session
	active    set                        // ACTIVE ones
	open      set                        // ACTIVE ones with a free seat
	locations map[string]*set            // ACTIVE ones by location
	props     map[string]map[string]*set // ACTIVE ones by searchable property key and value

	// Ordered indexes (ordered.go), built by the first search that needs
	// them: ixMu guards adding one under the read lock; changes keep
	// them under the write lock.
	ixMu       sync.Mutex
	orders     map[search.Field]*ordered // ACTIVE ones by a field's order
	sortedVals map[string]*values        // props' value sets of a key in value order
}

// entry is one live session. What a search tests on every candidate is
// held in the entry itself (seats, property references), so that
// testing it touches the entry and its property list, not the record.
type entry struct {
	pos
	s        *game.GameSession // never changed once stored: replaced
	fleet    *fleet
	cur, max int32 // seats: s.CurrentPlayerSessionCount, s.MaximumPlayerSessionCount
	// ver is the version of the put of s, seatVer that of its latest
	// seat count change (store.Change.Version).
	ver, seatVer int64
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

// SetHorizon tells Sessions that changes may reach Apply out of order
// (PostgreSQL), and when the transactions begun before a moment have all
// reached it: it then remembers the versions of sessions it no longer
// holds for as long as an older change of theirs may still come. Call it
// before Sessions is fed.
func (l *Sessions) SetHorizon(h store.Horizon) { l.gone.SetHorizon(h) }

// Apply applies the changes of committed transactions. Of two changes of
// one session, the one with the higher version wins, whatever their
// order (store.Change.Version); without versions, the later.
func (l *Sessions) Apply(changes []store.Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.apply(changes)
}

// apply is Apply under the write lock.
func (l *Sessions) apply(changes []store.Change) {
	for _, c := range changes {
		switch c.Kind {
		case store.FleetPut:
			f := l.fleet(c.ID)
			f.exists = true
			f.ended = f.ended || c.Ended
		case store.FleetDelete:
			l.fleet(c.ID).exists = false
		case store.SessionPut:
			l.put(c.PK, c.Session, c.Version)
		case store.SessionSeats:
			l.seats(c.ID, c.Seats, c.Version)
			l.holds.counted(c.ID, c.Held)
		}
	}
	if l.gone.Keeps() {
		l.gone.Prune()
	}
}

// newer reports whether a change at version v replaces what is held at
// version held: it is newer, or carries no version.
func newer(v, held int64) bool { return v == 0 || v > held }

// Loading starts loading fleet id afresh: whatever memory held of it is
// dropped, and the fleet is not answered from memory until Finish. Its
// rows as a snapshot of the store has them are then applied (Apply), and
// Finish applies what changed since and makes it answer.
func (l *Sessions) Loading(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drop(id)
	l.fleet(id).loading = true
}

// Finish applies changes, made since the snapshot Loading was followed
// by, and makes fleet id answer from memory, in one step.
func (l *Sessions) Finish(id string, changes []store.Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.apply(changes)
	l.fleet(id).loading = false
}

// Hide stops answering fleet id from memory at once (the node lost it),
// until DropFleet drops what memory holds of it, or Loading loads it
// again.
func (l *Sessions) Hide(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.fleets[id]; f != nil {
		f.loading = true
	}
}

// DropFleet forgets fleet id and its sessions.
func (l *Sessions) DropFleet(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drop(id)
}

// drop is DropFleet under the write lock.
func (l *Sessions) drop(id string) {
	f := l.fleets[id]
	if f == nil {
		return
	}
	f.live.ascend(nil, func(e *entry) bool {
		delete(l.byID, e.s.ID)
		return true
	})
	delete(l.fleets, id)
}

// answers reports whether the fleet is answered from memory: the store has
// it, and it is not being loaded.
func (f *fleet) answers() bool { return f != nil && f.exists && !f.loading }

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

// put stores session s (row key pk) as written at version v, unless
// memory holds a newer write of it.
func (l *Sessions) put(pk int64, s *game.GameSession, v int64) {
	// The newest seat count known, when newer than this put's.
	seats, seatVer := -1, int64(0)
	old := l.byID[s.ID]
	if old != nil {
		if !newer(v, old.ver) {
			return
		}
		if old.seatVer > v {
			seats, seatVer = int(old.cur), old.seatVer
		}
		old.fleet.unindex(old)
		old.fleet.live.remove(old)
		delete(l.byID, s.ID)
	} else if gv, g, ok := l.gone.Get(s.ID); ok {
		if g.ended && !newer(v, gv) {
			return
		}
		if !g.ended && gv > v {
			seats, seatVer = g.seats, gv
		}
		l.gone.Delete(s.ID)
	}
	f := l.fleet(s.FleetID)
	if !s.Live() {
		f.ended = true
		l.gone.Put(s.ID, max(v, seatVer), goneSession{ended: true})
		return
	}
	rec := l.strs.session(s)
	if seats >= 0 {
		rec.CurrentPlayerSessionCount = seats
	}
	e := &entry{pos: pos{store.Millis(s.CreationTime), pk}, s: rec, fleet: f,
		cur: int32(rec.CurrentPlayerSessionCount), max: int32(rec.MaximumPlayerSessionCount), ver: v, seatVer: seatVer}
	l.byID[e.s.ID] = e
	f.live.insert(e)
	f.index(e)
}

// seats sets the seat count of session id to n, written at version v,
// when it is live and memory holds no newer write of it. A count that
// comes before any put of its session is remembered for it (gone).
func (l *Sessions) seats(id string, n int, v int64) {
	e := l.byID[id]
	if e == nil {
		gv, g, ok := l.gone.Get(id)
		switch {
		case ok && !newer(v, gv):
		case ok && g.ended:
			l.gone.Put(id, v, g)
		default:
			l.gone.Put(id, v, goneSession{seats: n})
		}
		return
	}
	if !newer(v, max(e.ver, e.seatVer)) {
		return
	}
	e.seatVer = max(e.seatVer, v)
	if e.s.CurrentPlayerSessionCount == n {
		return
	}
	wasOpen := e.open()
	active := e.s.Status == game.SessionActive
	if active {
		e.fleet.reorder(e, false)
	}
	s := *e.s
	s.CurrentPlayerSessionCount = n
	e.s, e.cur = &s, int32(n)
	e.enc.Store(nil)
	if active {
		e.fleet.reorder(e, true)
	}
	if active && wasOpen != e.open() {
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
			if v := f.sortedVals[p.Key]; v != nil {
				v.add(vs)
			}
		}
		vs.insert(e)
		e.props[i] = prop{key: p.Key, set: vs}
	}
	for _, o := range f.orders {
		o.insert(e)
	}
}

// reorder takes an ACTIVE session out of the ordered indexes of its seat
// count (back: puts it back in), around a change of the count.
func (f *fleet) reorder(e *entry, back bool) {
	for _, field := range [...]search.Field{search.PlayerSessionCount, search.HasAvailablePlayerSessions} {
		if o := f.orders[field]; o != nil {
			if back {
				o.insert(e)
			} else {
				o.remove(e)
			}
		}
	}
}

// unindex takes e out of the fleet's indexes of ACTIVE sessions.
func (f *fleet) unindex(e *entry) {
	if e.s.Status != game.SessionActive {
		return
	}
	for _, o := range f.orders {
		o.remove(e)
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
			if v := f.sortedVals[p.key]; v != nil {
				v.drop(p.set)
			}
			if len(vals) == 0 {
				delete(f.props, p.key)
				delete(f.sortedVals, p.key)
			}
		}
	}
	e.props = nil
}

// HasSession reports whether memory holds game session id live.
func (l *Sessions) HasSession(id string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.byID[id] != nil
}

// Record answers a copy of live game session id as last committed, with
// its row key and its row's version (the newest of its put and its seat
// count), for a store reading it inside a write transaction
// (store.LiveSessionRecords); ok is false when memory does not hold it
// live, or does not answer for its fleet (loading, lost, not in the
// store).
func (l *Sessions) Record(id string) (*game.GameSession, int64, int64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e := l.byID[id]
	if e == nil || !e.fleet.answers() {
		return nil, 0, 0, false
	}
	c := *e.s
	c.Properties = slices.Clone(e.s.Properties)
	return &c, e.pk, max(e.ver, e.seatVer), true
}
