package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The commit feed: with a hook set (SetCommitHook), each write
// transaction notes, as it runs, every write the live state in memory
// follows (store.Change): game sessions written, seat counts changed,
// fleets added or removed. Every such write goes through the methods of
// this package that note it (InsertGameSession, UpdateGameSession,
// ReserveSeats and freeSeats, InsertFleet, DeleteFleet), whichever
// caller runs them: API, process endpoint, timers, placement,
// matchmaking. After the transaction commits, and before its caller
// hears the answer, the hook receives the notes, transactions in commit
// order: in group commit the committer calls it for the whole batch, in
// the batch's order, before waking any caller; otherwise commitMu holds
// the commit and the hook together. A job rolled back to its savepoint,
// a failed transaction and a failed commit give the hook nothing.

// SetCommitHook makes every committed write transaction report its
// changes to hook, in commit order (see above). Call it once, before the
// DB serves writes; hook must be quick and must not use the DB.
func (db *DB) SetCommitHook(hook func([]store.Change)) { db.hook.Store(&hook) }

// commitHook returns the hook, or nil.
func (db *DB) commitHook() func([]store.Change) {
	if h := db.hook.Load(); h != nil {
		return *h
	}
	return nil
}

// note records a change when the DB feeds a hook.
func (t *Tx) note(c store.Change) {
	if t.feed {
		t.changes = append(t.changes, c)
	}
}

// noteSession records session s, stored with row key pk and seat count
// cur.
func (t *Tx) noteSession(s *game.GameSession, pk int64, cur int) {
	if !t.feed {
		return
	}
	c := *s
	c.Properties = slices.Clone(s.Properties)
	c.CurrentPlayerSessionCount = cur
	c.TerminationTime = store.FromMillis(store.Millis(s.TerminationTime)) // as read back
	t.note(store.Change{Kind: store.SessionPut, ID: s.ID, PK: pk, Session: &c})
}

// LoadLive reads, in one read transaction, what the live state in memory
// is built from: every fleet (store.FleetPut, with Ended set when it has
// game sessions that ended) and then every game session that has not
// ended (store.SessionPut), in no particular order. visit's error stops
// the load.
func (db *DB) LoadLive(ctx context.Context, visit func(store.Change) error) error {
	return db.View(ctx, func(stx store.Tx) error {
		t := stx.(*Tx)
		rows, err := t.query(`SELECT f.id, EXISTS (SELECT 1 FROM game_sessions g
			WHERE g.fleet_id = f.id AND g.status IN ('ERROR', 'TERMINATED')) FROM fleets f ORDER BY f.id`)
		if err != nil {
			return err
		}
		var fleets []store.Change
		for rows.Next() {
			c := store.Change{Kind: store.FleetPut}
			if err := rows.Scan(&c.ID, &c.Ended); err != nil {
				rows.Close()
				return err
			}
			fleets = append(fleets, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range fleets {
			if err := visit(c); err != nil {
				return err
			}
		}
		rows, err = t.query(`SELECT ` + sessionColumns + ` FROM game_sessions
			WHERE status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		return decodeLive(rows, visit)
	})
}

// rawSession is one row of sessionColumns, not yet decoded.
type rawSession struct {
	pk, ended    int64
	doc          []byte
	status, name string
	maxP, cur    int
	policy       string
}

// decodeLive decodes the sessions of rows on every core (decoding their
// JSON is most of the cost of a start-up) and visits them one at a time,
// in no particular order. A visit error or a decode error stops it.
func decodeLive(rows *sql.Rows, visit func(store.Change) error) error {
	raw := make(chan rawSession, 256)
	decoded := make(chan store.Change, 256)
	var failed atomic.Pointer[error]
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for r := range raw {
				var s game.GameSession
				if err := json.Unmarshal(r.doc, &s); err != nil {
					failed.CompareAndSwap(nil, &err)
					continue
				}
				s.Status, s.Name, s.MaximumPlayerSessionCount, s.CurrentPlayerSessionCount = r.status, r.name, r.maxP, r.cur
				s.PlayerSessionCreationPolicy, s.TerminationTime = r.policy, store.FromMillis(r.ended)
				decoded <- store.Change{Kind: store.SessionPut, ID: s.ID, PK: r.pk, Session: &s}
			}
		}()
	}
	go func() {
		workers.Wait()
		close(decoded)
	}()
	var scanErr error
	go func() {
		defer close(raw)
		for rows.Next() && failed.Load() == nil {
			var r rawSession
			if scanErr = rows.Scan(&r.pk, &r.doc, &r.status, &r.name, &r.maxP, &r.cur, &r.policy, &r.ended); scanErr != nil {
				return
			}
			raw <- r
		}
		scanErr = rows.Err()
	}()
	for c := range decoded {
		if err := visit(c); err != nil {
			failed.CompareAndSwap(nil, &err)
			for range decoded {
			}
		}
	}
	if err := failed.Load(); err != nil {
		return *err
	}
	return scanErr
}
