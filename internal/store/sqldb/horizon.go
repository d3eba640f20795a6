package sqldb

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// outboxHorizon tells, on PostgreSQL, how far the outbox may be read
// without ever skipping a notification that commits late.
//
// Seqs are taken when a row is inserted, not when its transaction
// commits, so the rows a reader sees may have holes that fill in later.
// Rather than make appends wait for each other until commit (one lock
// for every writer of every fleet), every appending transaction holds
// the append lock (an advisory lock, in shared mode, so appenders never
// wait for each other) from before it takes its first seq until it
// ends. A reader then observes, in this order, the last seq handed out
// (L) and the transactions holding the lock. Every seq up to L was taken
// by one of those holders or by a transaction that has already ended; so
// once those holders have all ended, every seq up to L is settled:
// committed and visible to any later statement, or never to be.
//
// The observation is taken again when the last one has settled, so a
// reader lags the newest notification by the time the transactions in
// flight at one moment take to end (milliseconds), never by a long
// transaction that does not append. The order given is seq order, which
// respects causality: a transaction that saw another's commit takes its
// seqs after that one's.
type outboxHorizon struct {
	// key is the append lock's advisory key, from the store's schema, so
	// that stores in other schemas of one database do not wait on each
	// other.
	key int64

	// advanced, when set, is called each time settled moves forward
	// (OnOutboxSettled).
	advanced atomic.Pointer[func()]

	mu      sync.Mutex
	settled int64 // every seq ≤ settled is settled
	// Observations waiting to settle, oldest first: the last seq handed
	// out, and the virtual transaction ids holding the append lock at the
	// time (observation).
	pending []observation
	// observe and lastSeq are the statements of an observation and of
	// the last seq alone, with the outbox sequence's oid and the key
	// written in (statements), built at first use.
	observe, lastSeq string
}

// observation is what a reader saw at one moment: every seq up to last
// is settled once every one of holders has ended.
type observation struct {
	last    int64
	holders []string
}

// maxPending bounds the observations kept waiting. Dropping the oldest
// only delays the horizon: a later observation settles every seq an
// earlier one would, when its own holders have ended.
const maxPending = 16

// horizonKey is the append lock's key for a schema: 31 bits of its hash
// (an advisory key of one 32-bit half, so pg_locks shows it in objid).
func horizonKey(schema string) int64 {
	h := fnv.New32a()
	h.Write([]byte("anylift outbox " + schema))
	return int64(h.Sum32() & 0x7fffffff)
}

// SetOutboxSchema names the schema the store's outbox lives in; the
// PostgreSQL backend calls it once, before the store is shared.
func (db *DB) SetOutboxSchema(schema string) { db.horizon.key = horizonKey(schema) }

// statements builds, once per store, the observation's statement and
// the last seq's, with the outbox sequence named by its oid (looked up by
// name at every run, it was most of the last seq's cost) and the append
// lock's key written in.
//
// The observation reads, in one statement and in this order, the last
// seq handed out and then the holders of the append lock (but the
// reader's own connection): the holders are a subquery correlated with
// the last seq, run only once that has been read, and only when it is
// beyond the settled horizon (its one parameter). Reading pg_locks copies
// the server's whole lock table: a reader that finds nothing new to
// settle does not read it.
func (h *outboxHorizon) statements(t *Tx) error {
	if h.observe != "" {
		return nil
	}
	var seq int64
	if err := t.queryRow(`SELECT pg_get_serial_sequence('outbox', 'seq')::regclass::oid::bigint`).Scan(&seq); err != nil {
		return err
	}
	h.lastSeq = fmt.Sprintf(`SELECT COALESCE(pg_sequence_last_value(%d::oid::regclass), 0)`, seq)
	h.observe = fmt.Sprintf(`SELECT s.last, (SELECT COALESCE(string_agg(virtualtransaction, ','), '') FROM pg_locks
		WHERE locktype = 'advisory' AND classid = 0 AND objid = %d::oid AND objsubid = 1
			AND pid <> pg_backend_pid() AND s.last > ?::bigint)
		FROM (SELECT COALESCE(pg_sequence_last_value(%d::oid::regclass), 0) AS last OFFSET 0) s`, h.key, seq)
	return nil
}

// OnOutboxSettled sets f to be called each time the settled horizon moves
// forward (PostgreSQL). Every reader shares the horizon: one reader may
// settle notifications that another read moments before, and found
// unsettled; f (the event service's Wake) makes that one read again
// rather than at its next poll. f must not block.
func (db *DB) OnOutboxSettled(f func()) { db.horizon.advanced.Store(&f) }

// settle returns the settled horizon, advancing it with t's connection
// (read committed: each statement sees what has committed before it).
func (h *outboxHorizon) settle(t *Tx) (int64, error) {
	h.mu.Lock()
	before := h.settled
	upto, err := h.settleLocked(t)
	h.mu.Unlock()
	if f := h.advanced.Load(); f != nil && upto > before {
		(*f)()
	}
	return upto, err
}

func (h *outboxHorizon) settleLocked(t *Tx) (int64, error) {
	if t.appending {
		// This transaction holds the append lock, and its own seqs are
		// not committed: the observation cannot see it (it leaves out
		// the reader's own connection), so any horizon taken here could
		// pass them, and readers elsewhere would skip them once they
		// commit. It reads up to the horizon as it stands.
		return h.settled, nil
	}
	if err := h.statements(t); err != nil {
		return h.settled, err
	}
	var last int64
	var held string
	if err := t.queryRow(h.observe, h.settled).Scan(&last, &held); err != nil {
		return h.settled, err
	}
	if last <= h.settled {
		return h.settled, nil // nothing new: the holders were not read
	}
	var holders []string
	if held != "" {
		holders = strings.Split(held, ",")
	}
	h.observed(last, holders)
	return h.settled, nil
}

// observed takes in an observation: the last seq handed out, then the
// holders of the append lock. Those holders are also every transaction
// still holding it of those an earlier observation saw, since a
// transaction holds the lock from before its first seq to its end. So
// the newest observation none of whose holders is among them is settled,
// and with it every earlier one: a holder of an earlier one that had not
// ended would have held the lock at the later one's too. This one itself
// is settled if it saw no holder, else it waits for a later reading.
func (h *outboxHorizon) observed(last int64, holders []string) {
	if last > h.settled {
		if len(h.pending) == maxPending {
			h.pending = slices.Delete(h.pending, 0, 1)
		}
		h.pending = append(h.pending, observation{last, holders})
	}
	for i := len(h.pending) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(h.pending[i].holders, func(v string) bool { return slices.Contains(holders, v) }) {
			h.settled = max(h.settled, h.pending[i].last)
			h.pending = slices.DeleteFunc(h.pending, func(o observation) bool { return o.last <= h.settled })
			break
		}
	}
}

// end returns the outbox's end for a reader starting now: it takes the
// append lock alone for the rest of t (waiting for the appenders in
// flight, and holding new ones back until t ends, which a reader's
// transaction does at once), so every seq handed out so far is settled.
func (h *outboxHorizon) end(t *Tx) (int64, error) {
	if _, err := t.exec(`SELECT pg_advisory_xact_lock(?)`, h.key); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.statements(t); err != nil {
		return 0, err
	}
	var last int64
	if err := t.queryRow(h.lastSeq).Scan(&last); err != nil {
		return 0, err
	}
	if last > h.settled && !t.appending {
		// (A transaction that appended holds seqs not yet committed: it
		// may start a reader of its own at last, but settles nothing.)
		h.settled = last
		for len(h.pending) > 0 && h.pending[0].last <= last {
			h.pending = h.pending[1:]
		}
	}
	return last, nil
}

// Unsettled reports whether notifications may be waiting behind
// transactions in flight (PostgreSQL): a reader that found nothing new
// should look again soon rather than after its usual interval.
func (db *DB) OutboxUnsettled() bool {
	db.horizon.mu.Lock()
	defer db.horizon.mu.Unlock()
	return len(db.horizon.pending) > 0
}
