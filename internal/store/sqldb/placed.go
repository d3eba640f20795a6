package sqldb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Placements in flight from memory. A queue placement that the placer has
// placed (PENDING, its provisional game session on a fleet this node's
// memory answers for) is read once more, by the session's activation or
// end (PlacementOfSession), and written once more, at its end. While the
// node owns the fleet, this node's committer is the only writer of such a
// placement but for one: DeleteGameSessionQueue, on any node, fails every
// PENDING placement of its queue. So the store keeps, by game session,
// the placed placements that its own write transactions committed (the
// placer's, at their commit), and PlacementOfSession inside a write
// transaction answers from there instead of selecting (and locking) the
// row.
//
// The placement's next write is then guarded on what memory knows: WHERE
// status = 'PENDING' AND game_session_id = ? (the table has no version
// column). A placement that another node's queue deletion ended matches
// nothing: the entry is dropped, and the job fails with errPlacementMoved,
// on which the whole batch is run again (as after a deadlock); the job
// then reads the store, finds no pending placement, and overwrites
// nothing.
//
// Entries go in at commit, from the jobs that succeeded, and leave at any
// write of the placement by this store (its end, its return to be placed
// again). A placement written by a job of the running batch is read from
// the store, as the memory does not know of it yet. Entries are kept with
// the generation ForgetRecords moves on whenever the node gains or loses
// a fleet: what was noted before is not entered, and what was entered is
// dropped. A node taking a fleet over reloads its placed placements from
// the store (LoadPlaced). A read from memory fences the fleet, as a
// session read from memory does (memsessions.go). Nothing missing from
// memory is taken for absent: PlacementOfSession then reads the store.

// placedMemory is the placed placements kept, by game session id, and
// the game session of each by placement id.
type placedMemory struct {
	mu        sync.Mutex
	gen       uint64
	bySession map[string]*game.Placement // as stored; never handed out
	byID      map[string]string
}

// maxPlaced bounds placedMemory: past it, it starts again empty.
const maxPlaced = 1 << 16

// placedNote is a write of a placement by a job, for the memory at commit:
// p to enter (nil: the placement id leaves).
type placedNote struct {
	id  string
	p   *game.Placement
	gen uint64
}

// placedTx is what a write transaction knows of placed placements: the
// running job's notes, those of the batch's jobs that succeeded, the
// placements written in the batch (by any job, the failed included), and
// the game session ("" for none) of each placement the running job read
// without locking its row: from memory, or listed (ListPendingPlacements).
type placedTx struct {
	job, batch []placedNote
	written    map[string]bool
	known      map[string]string
}

// errPlacementMoved fails a write of a placement read without its lock
// (from memory, or listed) that the store's row no longer matches:
// another node ended it (stopped it, timed it out, deleted its queue) or
// placed it. The batch is run again, and reads the store.
var errPlacementMoved = errors.New("game session placement changed in the store since it was read")

// retryable reports a failure after which the whole transaction may be
// run again.
func (db *DB) retryable(err error) bool {
	return db.dialect.IsRetryable(err) || errors.Is(err, errPlacementMoved)
}

// keepsPlaced reports whether t may use and feed the memory of placed
// placements for fleetID.
func (t *Tx) keepsPlaced(fleetID string) bool {
	return t.writable && fleetID != "" && t.memoryFor(fleetID)
}

func (m *placedMemory) generation() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// forget drops every entry, and keeps none noted before it.
func (m *placedMemory) forget() {
	m.mu.Lock()
	m.gen++
	m.bySession, m.byID = nil, nil
	m.mu.Unlock()
}

// removeLocked drops placement id; m.mu is held.
func (m *placedMemory) removeLocked(id string) {
	if gs, ok := m.byID[id]; ok {
		delete(m.byID, id)
		delete(m.bySession, gs)
	}
}

// enterLocked keeps p (as stored) unless gen is past; m.mu is held.
func (m *placedMemory) enterLocked(p *game.Placement, gen uint64, replace bool) {
	if gen != m.gen {
		return
	}
	if _, ok := m.byID[p.ID]; ok && !replace {
		return
	}
	m.removeLocked(p.ID)
	if m.bySession == nil || len(m.bySession) >= maxPlaced {
		m.bySession, m.byID = map[string]*game.Placement{}, map[string]string{}
	}
	m.bySession[p.GameSessionID] = p
	m.byID[p.ID] = p.GameSessionID
}

// remove drops placement id.
func (m *placedMemory) remove(id string) {
	m.mu.Lock()
	m.removeLocked(id)
	m.mu.Unlock()
}

// get returns a copy of the placement kept for game session gs.
func (m *placedMemory) get(gs string) (*game.Placement, bool) {
	m.mu.Lock()
	p, ok := m.bySession[gs]
	m.mu.Unlock()
	if !ok {
		return nil, false
	}
	return clonePlacement(p), true
}

// notePlacement records that the running job wrote p, for the memory at
// commit.
func (t *Tx) notePlacement(p *game.Placement) {
	if !t.writable {
		return
	}
	if t.placed.written == nil {
		t.placed.written = map[string]bool{}
	}
	t.placed.written[p.ID] = true
	n := placedNote{id: p.ID, gen: t.db.placed.generation()}
	if p.Status == game.PlacementPending && p.GameSessionID != "" && t.keepsPlaced(p.FleetID) {
		if s, ok := storedPlacement(p); ok {
			n.p = s
		}
	}
	t.placed.job = append(t.placed.job, n)
}

// placedJobEnded keeps a successful job's notes for the commit, and drops
// a failed one's; what the job read from memory is forgotten.
func (t *Tx) placedJobEnded(ok bool) {
	if ok {
		t.placed.batch = append(t.placed.batch, t.placed.job...)
	}
	t.placed.job = t.placed.job[:0]
	clear(t.placed.known)
}

// placedCommitted applies the batch's notes once it committed.
func (t *Tx) placedCommitted(committed bool) {
	notes := t.placed.batch
	t.placed.batch, t.placed.written = nil, nil
	if !committed || len(notes) == 0 {
		return
	}
	m := &t.db.placed
	m.mu.Lock()
	for _, n := range notes {
		if n.p != nil {
			m.enterLocked(n.p, n.gen, true)
		} else {
			m.removeLocked(n.id)
		}
	}
	m.mu.Unlock()
}

// memoryPlacement answers PlacementOfSession from memory (see above); ok
// is false when the store must.
func (t *Tx) memoryPlacement(gameSessionID string) (*game.Placement, bool, error) {
	if !t.writable || t.db.free == nil {
		return nil, false, nil
	}
	gen := t.db.placed.generation()
	p, ok := t.db.placed.get(gameSessionID)
	if !ok || t.placed.written[p.ID] || !t.keepsPlaced(p.FleetID) || t.db.placed.generation() != gen {
		return nil, false, nil
	}
	t.readMemory(p.FleetID)
	if err := t.fence(p.FleetID); err != nil {
		return nil, false, err
	}
	if t.placed.known == nil {
		t.placed.known = map[string]string{}
	}
	t.placed.known[p.ID] = gameSessionID
	return p, true, nil
}

// Placements listed without a lock. The placer places the PENDING
// placements its job listed (ListPendingPlacements, which locks nothing)
// without reading each again under its row lock, which cost a round trip
// per placement on the committer. Placements are any node's to write
// (StopGameSessionPlacement, a queue's deletion, the timeout sweep, the
// placer of another node's fleet), so the write of a listed placement is
// guarded on what the list read, as a placed placement's from memory is:
// WHERE status = 'PENDING' AND game_session_id = ?. That is enough to
// tell the row unchanged: a PENDING placement's row changes only by being
// placed (its game session set, a new id each time), by its end (no
// longer PENDING), or by its return to be placed again after its session
// failed to activate, which clears every field that placing set, leaving
// the document as it was inserted (placed fields are all the placer
// writes; PlacedPlayers is written at the end only). So a row that still
// matches holds the document the list read, and an update matching no
// row fails the job (errPlacementMoved): the batch runs again, lists
// again, and the stopped or placed placement is no longer among those
// listed. On PostgreSQL (READ COMMITTED) an update that meets a row
// another transaction is writing waits for it and tests its WHERE on the
// row as committed; once the update matched, its row lock is held to the
// commit, as the SELECT … FOR UPDATE's was, so a stop waits for the
// placement to be placed and then refuses it. On SQLite nothing else
// writes while the job runs, and the guard always matches.

// readUnlocked notes that the running job read p without locking its row
// (listed): its next write is guarded on what was read.
func (t *Tx) readUnlocked(p *game.Placement) {
	if !t.writable || p.Status != game.PlacementPending {
		return
	}
	if t.placed.known == nil {
		t.placed.known = map[string]string{}
	}
	t.placed.known[p.ID] = p.GameSessionID
}

// readLocked notes that the running job holds placement id's row as it
// is now (read under its lock, or written): its next write needs no
// guard.
func (t *Tx) readLocked(id string) {
	delete(t.placed.known, id)
}

// placedGuard is the condition, and its arguments, that a write of p
// read without its lock (from memory, or listed) adds to its WHERE, and
// what its miss means; q is "" for a placement read under its lock.
func (t *Tx) placedGuard(p *game.Placement) (q string, args []any, miss func() error) {
	gs, ok := t.placed.known[p.ID]
	if !ok {
		return "", nil, nil
	}
	return ` AND status = 'PENDING' AND game_session_id = ?`, []any{gs}, func() error {
		t.db.placed.remove(p.ID)
		return fmt.Errorf("game session placement %s: %w", p.ID, errPlacementMoved)
	}
}

// LoadPlaced enters the placed placements (PENDING, with a provisional
// game session) of fleets, which this node has just taken over and holds
// in memory, from the store. Safe at any time: what it enters is checked
// by the guard of the placement's next write.
func (db *DB) LoadPlaced(ctx context.Context, fleets []string) error {
	if db.free == nil || len(fleets) == 0 {
		return nil
	}
	gen := db.placed.generation()
	want := map[string]bool{}
	for _, f := range fleets {
		want[f] = true
	}
	var found []*game.Placement
	err := db.View(ctx, func(stx store.Tx) error {
		t := stx.(*Tx)
		return t.each(func(r Row) error {
			p, err := t.scanPlacement(r)
			if err == nil && want[p.FleetID] {
				found = append(found, p)
			}
			return err
		}, `SELECT doc FROM placements WHERE status = 'PENDING' AND game_session_id <> ''`)
	})
	if err != nil {
		return err
	}
	m := &db.placed
	m.mu.Lock()
	for _, p := range found {
		if s, ok := storedPlacement(p); ok && p.Status == game.PlacementPending && p.GameSessionID != "" {
			m.enterLocked(s, gen, false)
		}
	}
	m.mu.Unlock()
	return nil
}
