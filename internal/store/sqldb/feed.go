package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
// hears the answer, the hook receives the notes: in group commit the
// committer calls it for the whole batch, in the batch's order, before
// waking any caller; otherwise, on SQLite, commitMu holds the commit and
// the hook together, so transactions reach the hook in commit order. On
// PostgreSQL transactions commit concurrently, each on its connection,
// and call the hook after their own commit, unordered: two that wrote the
// same row may reach it in either order. Each game session and process
// row counts its writes (its version, which every write that changes the
// row raises by one, in the same statement), and each change carries the
// version it wrote, so the memory keeps the newest (store.Change.Version,
// flights.go). A job rolled back to its savepoint, a failed transaction
// and a failed commit give the hook nothing.

// SetCommitHook makes every committed write transaction report its
// changes to hook (see above). Call it once, before the DB serves writes;
// hook must be quick and must not use the DB.
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
	if k := t.known[c.ID]; k != nil && (c.Kind == store.SessionPut || c.Kind == store.SessionSeats) && c.Version != k.version {
		delete(t.known, c.ID) // written otherwise than from what the job knows
	}
	if t.feed {
		t.changes = append(t.changes, c)
	}
}

// noteSession records session s, stored with row key pk, seat count cur
// and version.
func (t *Tx) noteSession(s *game.GameSession, pk int64, cur int, version int64) {
	if !t.feed {
		return
	}
	c := *s
	c.Properties = slices.Clone(s.Properties)
	c.CurrentPlayerSessionCount = cur
	c.TerminationTime = store.FromMillis(store.Millis(s.TerminationTime)) // as read back
	c.CreationTime = asStored(s.CreationTime)
	t.note(store.Change{Kind: store.SessionPut, ID: s.ID, PK: pk, Session: &c, Version: version})
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
		rows, err = t.query(`SELECT ` + sessionColumns + `, version FROM game_sessions
			WHERE status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		return decodeLive(rows, visit)
	})
}

// rawSession is one row of sessionColumns and version, not yet decoded.
type rawSession struct {
	pk, ended    int64
	version      int64
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
				decoded <- store.Change{Kind: store.SessionPut, ID: s.ID, PK: r.pk, Session: &s, Version: r.version}
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
			if scanErr = rows.Scan(&r.pk, &r.doc, &r.status, &r.name, &r.maxP, &r.cur, &r.policy, &r.ended, &r.version); scanErr != nil {
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

// Snapshot is a read transaction that sees one state of the store
// throughout (REPEATABLE READ on PostgreSQL, where it is taken at its
// first statement; any read transaction on SQLite), from which a memory
// loads fleets one at a time while the store is written (Fleets, Rows).
type Snapshot struct{ t *Tx }

// ReadSnapshot runs fn in a Snapshot.
func (db *DB) ReadSnapshot(ctx context.Context, fn func(*Snapshot) error) error {
	var opts *sql.TxOptions
	if db.dialect.Name == "postgres" {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	sqlTx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer sqlTx.Rollback()
	return fn(&Snapshot{t: &Tx{tx: sqlTx, db: db, pool: db.read, ctx: ctx}})
}

// Fleets visits what the live state in memory holds of the fleets ids, as
// the snapshot has them: for each fleet that exists, a store.FleetPut
// (Ended set when it has game sessions that ended), then its game
// sessions that have not ended (store.SessionPut) and its server
// processes that have not (store.ProcessPut), each with its version; a
// fleet's put comes before its rows. visit's error stops it.
func (s *Snapshot) Fleets(ids []string, visit func(store.Change) error) error {
	t := s.t
	for _, id := range ids {
		c := store.Change{Kind: store.FleetPut, ID: id}
		err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM game_sessions g
			WHERE g.fleet_id = f.id AND g.status IN ('ERROR', 'TERMINATED')) FROM fleets f WHERE f.id = ?`, id).Scan(&c.Ended)
		if errNoRows(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := visit(c); err != nil {
			return err
		}
		rows, err := t.query(`SELECT `+sessionColumns+`, version FROM game_sessions
			WHERE fleet_id = ? AND status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')`, id)
		if err != nil {
			return err
		}
		err = decodeLive(rows, visit)
		rows.Close()
		if err != nil {
			return err
		}
		if err := t.visitProcesses(`SELECT doc, game_session_id, version FROM processes
			WHERE fleet_id = ? AND status <> 'TERMINATED'`, []any{id}, visit); err != nil {
			return err
		}
	}
	return nil
}

// Rows visits the game sessions (by id) and server processes named, as
// the snapshot has them, ended or not, as store.SessionPut and
// store.ProcessPut with their versions; those it lacks are left out.
func (s *Snapshot) Rows(sessions []string, procs []store.ProcessKey, visit func(store.Change) error) error {
	t := s.t
	for _, id := range sessions {
		var version int64
		pk, gs, err := scanSession(scanPlus{t.queryRow(`SELECT `+sessionColumns+`, version FROM game_sessions WHERE id = ?`, id), &version})
		if errNoRows(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := visit(store.Change{Kind: store.SessionPut, ID: gs.ID, PK: pk, Session: gs, Version: version}); err != nil {
			return err
		}
	}
	for _, k := range procs {
		if err := t.visitProcesses(`SELECT doc, game_session_id, version FROM processes WHERE fleet_id = ? AND compute = ? AND pid = ?`,
			[]any{k.FleetID, k.ComputeName, k.PID}, visit); err != nil {
			return err
		}
	}
	return nil
}
