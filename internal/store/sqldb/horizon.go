package sqldb

import (
	"hash/fnv"
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
	// An observation waiting to settle: the last seq handed out, and the
	// virtual transaction ids holding the append lock at the time.
	pending bool
	last    int64
	holders []string
}

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

const (
	lastSeqQuery = `SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('outbox', 'seq')::regclass), 0)`
	holdersQuery = `SELECT virtualtransaction FROM pg_locks
		WHERE locktype = 'advisory' AND classid = 0 AND objid = ?::bigint::oid AND objsubid = 1 AND pid <> pg_backend_pid()`
	stillHeldQuery = `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND classid = 0 AND objid = ?::bigint::oid AND objsubid = 1 AND virtualtransaction = ANY(?)`
)

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
		// not committed: the holders query cannot see it (it leaves out
		// the reader's own connection), so any horizon taken here could
		// pass them, and readers elsewhere would skip them once they
		// commit. It reads up to the horizon as it stands.
		return h.settled, nil
	}
	if h.pending {
		var n int
		if err := t.queryRow(stillHeldQuery, h.key, h.holders).Scan(&n); err != nil {
			return h.settled, err
		}
		if n > 0 {
			return h.settled, nil
		}
		h.settled, h.pending, h.holders = max(h.settled, h.last), false, nil
	}
	var last int64
	if err := t.queryRow(lastSeqQuery).Scan(&last); err != nil {
		return h.settled, err
	}
	if last <= h.settled {
		return h.settled, nil
	}
	holders, err := t.queryStrings(holdersQuery, h.key)
	if err != nil {
		return h.settled, err
	}
	if len(holders) == 0 {
		h.settled = last
	} else {
		h.pending, h.last, h.holders = true, last, holders
	}
	return h.settled, nil
}

// end returns the outbox's end for a reader starting now: it takes the
// append lock alone for the rest of t (waiting for the appenders in
// flight, and holding new ones back until t ends, which a reader's
// transaction does at once), so every seq handed out so far is settled.
func (h *outboxHorizon) end(t *Tx) (int64, error) {
	if _, err := t.exec(`SELECT pg_advisory_xact_lock(?)`, h.key); err != nil {
		return 0, err
	}
	var last int64
	if err := t.queryRow(lastSeqQuery).Scan(&last); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if last > h.settled && !h.pending && !t.appending {
		// (A transaction that appended holds seqs not yet committed: it
		// may start a reader of its own at last, but settles nothing.)
		h.settled = last
	}
	return last, nil
}

// Unsettled reports whether notifications may be waiting behind
// transactions in flight (PostgreSQL): a reader that found nothing new
// should look again soon rather than after its usual interval.
func (db *DB) OutboxUnsettled() bool {
	db.horizon.mu.Lock()
	defer db.horizon.mu.Unlock()
	return db.horizon.pending
}
