package sqldb

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Game sessions from memory inside write transactions. With a
// store.LiveSessionRecords set (SetLiveSessions), GetGameSession inside a
// write transaction reads a live session of a fleet the memory answers
// for from the memory, with its row key and version, instead of selecting
// (and, on PostgreSQL, locking) its row. The store is then the only
// writer of that fleet: one server on SQLite, whose writes go through one
// committer; on PostgreSQL a node that owns the fleet, whose writes go
// through its one committer and whose every write of the fleet is fenced.
// No other transaction can change the row while this one runs, so the
// lock that a SELECT … FOR UPDATE would take guards against nothing.
//
// What the transaction read from memory, and what it wrote of that
// session since, it keeps (known): an update of the session or of its
// seats then needs no answer from the store, since the row key, the seat
// count and the version it would return are known. It is written with a
// guard on the version it read (WHERE version = ?), which on PostgreSQL
// is queued in the pipeline (pipeline.go): a row the memory is out of
// step with matches nothing, and fails the job (errStale) rather than be
// overwritten.
//
// The memory learns a batch's writes at its commit, so a session that
// this job or an earlier job of its batch wrote is read from the store,
// as processes are (freeprocs.go). What a job knows is forgotten when it
// ends, whether it succeeded or not: a failed job's writes are undone to
// its savepoint, and the memory, which heard nothing of them, is as it
// was.

// SetLiveSessions makes GetGameSession in write transactions answer from
// sessions for the fleets whose processes the memory of processes answers
// for (SetLiveProcesses, SetLiveProcessesFor), which it must be set with;
// the commit hook must feed sessions. Call it once, before the DB serves
// writes.
func (db *DB) SetLiveSessions(sessions store.LiveSessionRecords) { db.sessions = sessions }

// errStale fails a write made from memory that the store's row does not
// match: the memory was behind the store, which it never is while this
// node is the fleet's only writer.
var errStale = errors.New("game session changed in the store but not in memory")

// knownSession is a game session as this job read it from memory and
// has written it since: its row key, the version its row has now, and
// the record (its seat count the stored one).
type knownSession struct {
	pk, version int64
	s           *game.GameSession
}

// memorySession answers GetGameSession from memory (see above); ok is
// false when the store must.
func (t *Tx) memorySession(id string) (*game.GameSession, bool) {
	if t.db.sessions == nil || t.db.free == nil || !t.writable || t.sessionWritten(id) {
		return nil, false
	}
	s, pk, version, ok := t.db.sessions.Record(id)
	if !ok || !t.memoryFor(s.FleetID) {
		return nil, false
	}
	t.readMemory(s.FleetID)
	if t.known == nil {
		t.known = map[string]*knownSession{}
	}
	t.known[id] = &knownSession{pk: pk, version: version, s: copySession(s)}
	t.sawProperties(s)
	return s, true
}

// copySession copies s, its properties included.
func copySession(s *game.GameSession) *game.GameSession {
	c := *s
	c.Properties = slices.Clone(s.Properties)
	return &c
}

// sessionWritten reports whether this job, or an earlier job of its batch
// that succeeded, wrote game session id (its record or its seats).
func (t *Tx) sessionWritten(id string) bool {
	if t.writtenSessions[id] {
		return true
	}
	for _, c := range t.changes {
		if (c.Kind == store.SessionPut || c.Kind == store.SessionSeats) && c.ID == id {
			return true
		}
	}
	return false
}

// readMemory notes that this transaction read fleetID's live state from
// memory (fence).
func (t *Tx) readMemory(fleetID string) {
	if t.memFleets == nil {
		t.memFleets = map[string]bool{}
	}
	t.memFleets[fleetID] = true
}

// staleCheck fails a guarded write that matched no row.
func staleCheck(id string) func() error {
	return func() error { return fmt.Errorf("game session %s: %w", id, errStale) }
}

// updateKnown is UpdateGameSession of a session this job knows (see
// above): one update guarded by the version read, needing no answer.
func (t *Tx) updateKnown(s *game.GameSession, k *knownSession, doc []byte) error {
	err := t.writeKnown(sessionWrite{id: s.ID, version: k.version, sets: changedColumns(k.s, s), doc: string(doc), hasDoc: true})
	if err != nil {
		return err
	}
	if t.props[s.ID] != propertiesKey(s.Properties) {
		if err := t.putProperties(k.pk, s.Properties); err != nil {
			return err
		}
		t.sawProperties(s)
	}
	cur := k.s.CurrentPlayerSessionCount
	t.noteSession(s, k.pk, cur, k.version+1)
	c := copySession(s)
	c.CurrentPlayerSessionCount = cur
	c.TerminationTime = store.FromMillis(store.Millis(s.TerminationTime))
	t.known[s.ID] = &knownSession{pk: k.pk, version: k.version + 1, s: c}
	return nil
}

// columnSet is one assignment of an UPDATE's SET.
type columnSet struct {
	column string
	v      any
}

// changedColumns is the assignments of the columns of session s that
// differ from old, the session as the row holds it. SQLite rewrites the
// entries of every index on a column an UPDATE sets, and of every partial
// index whose condition reads one, whether its value changed or not: a
// column left out of the SET keeps those entries, and their pages, as
// they are.
func changedColumns(old, s *game.GameSession) []columnSet {
	var sets []columnSet
	set := func(column string, changed bool, v any) {
		if changed {
			sets = append(sets, columnSet{column, v})
		}
	}
	set("compute", s.ComputeName != old.ComputeName, s.ComputeName)
	set("status", s.Status != old.Status, s.Status)
	set("name", s.Name != old.Name, s.Name)
	set("max_players", s.MaximumPlayerSessionCount != old.MaximumPlayerSessionCount, s.MaximumPlayerSessionCount)
	set("policy", s.PlayerSessionCreationPolicy != old.PlayerSessionCreationPolicy, s.PlayerSessionCreationPolicy)
	ended := store.Millis(s.TerminationTime)
	set("ended", ended != store.Millis(old.TerminationTime), ended)
	set("reason", s.StatusReason != old.StatusReason, s.StatusReason)
	return sets
}

// takeKnownSeats is takeSeats for a session this job knows that has the
// room asked for: one update guarded by the version, needing no answer.
// ok is false when the session has not the room (the store path then
// decides, expiring stale reservations).
func (t *Tx) takeKnownSeats(gameSessionID string, n int) (*game.GameSession, int64, bool, error) {
	k := t.known[gameSessionID]
	if k == nil {
		return nil, 0, false, nil
	}
	s := k.s
	if s.Status != game.SessionActive || s.PlayerSessionCreationPolicy != game.AcceptAll ||
		s.CurrentPlayerSessionCount+n > s.MaximumPlayerSessionCount {
		return nil, 0, false, nil
	}
	if err := t.writeKnown(sessionWrite{id: gameSessionID, version: k.version, seats: n}); err != nil {
		return nil, 0, false, err
	}
	c := copySession(s)
	c.CurrentPlayerSessionCount += n
	t.known[gameSessionID] = &knownSession{pk: k.pk, version: k.version + 1, s: c}
	return copySession(c), k.version + 1, true, nil
}

// A known session's writes, one UPDATE each, guarded by the version the
// job knows. On PostgreSQL an UPDATE that changes an indexed column of a
// game session (its status, its seat count) writes a new version of the
// row and an entry in each of its indexes, about twelve WAL records: an
// activation that fulfils a placement sets the session ACTIVE and then
// takes the seats of the placement's players, two such updates of one
// row, one after the other. A write of a session whose previous update
// is still the last statement queued in the pipeline (nothing sent since,
// nothing queued after it) is folded into that update instead: one
// UPDATE setting both, its version raised by both, under the first one's
// guard. Nothing can run between two consecutive statements of one
// transaction, so the one does exactly what the two would have.

// sessionWrite is one guarded update of a known session, or several
// folded into one.
type sessionWrite struct {
	id      string
	version int64 // the row's version before: the guard
	bumps   int64 // the writes folded in (the version is raised by as many)
	sets    []columnSet
	seats   int // added to cur_players
	doc     string
	hasDoc  bool
	at      int // its place in the pipeline
}

// statement is w's UPDATE.
func (w *sessionWrite) statement() (string, []any) {
	var q strings.Builder
	args := make([]any, 0, len(w.sets)+5)
	q.WriteString("UPDATE game_sessions SET ")
	for _, c := range w.sets {
		q.WriteString(c.column)
		q.WriteString(" = ?, ")
		args = append(args, c.v)
	}
	if w.seats != 0 {
		q.WriteString("cur_players = cur_players + ?, ")
		args = append(args, w.seats)
	}
	if w.hasDoc {
		q.WriteString("doc = ?, ")
		args = append(args, w.doc)
	}
	q.WriteString("version = version + ? WHERE id = ? AND version = ?")
	return q.String(), append(args, w.bumps, w.id, w.version)
}

// fold adds the later write n of the same session to w.
func (w *sessionWrite) fold(n sessionWrite) {
	for _, c := range n.sets {
		i := slices.IndexFunc(w.sets, func(o columnSet) bool { return o.column == c.column })
		if i < 0 {
			w.sets = append(w.sets, c)
		} else {
			w.sets[i] = c
		}
	}
	w.seats += n.seats
	if n.hasDoc {
		w.doc, w.hasDoc = n.doc, true
	}
	w.bumps++
}

// writeKnown queues w, or folds it into the same session's update queued
// last (see above).
func (t *Tx) writeKnown(w sessionWrite) error {
	if u := t.lastWrite; u != nil && u.id == w.id && u.at == len(t.pipe)-1 && u.version+u.bumps == w.version {
		u.fold(w)
		q, args := u.statement()
		t.pipe[u.at].q, t.pipe[u.at].args = t.db.rebind(q), args
		t.sent++ // a write as any other to what reads since count (players.go)
		return nil
	}
	w.bumps = 1
	q, args := w.statement()
	if err := t.laterGuarded(staleCheck(w.id), q, args...); err != nil {
		return err
	}
	if t.conn != nil {
		w.at = len(t.pipe) - 1
		t.lastWrite = &w
	}
	return nil
}

// asStored is tm as the stored JSON document reads it back: no monotonic
// clock reading, the zone the decoding gives. A UTC time of years 0 to
// 9999 (the clock's) reads back as it is, its monotonic reading dropped;
// others take the round trip (TestAsStoredAsJSON).
func asStored(tm time.Time) time.Time {
	if tm.Location() == time.UTC && tm.Year() >= 0 && tm.Year() <= 9999 {
		return tm.Round(0)
	}
	if b, err := tm.MarshalJSON(); err == nil {
		tm.UnmarshalJSON(b)
	}
	return tm
}
