package sqldb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Processes from memory. With a store.LiveProcesses set
// (SetLiveProcesses), ClaimFreeProcess takes its process from that memory
// instead of querying for candidates, and writes the claim as one
// conditional column update; CountFreeProcesses counts in memory; and
// GetProcess inside a write transaction reads the memory.
//
// The memory learns of writes at commit (the commit feed), so inside a
// batch it does not yet know what the batch's earlier jobs wrote. A
// process that this batch has written already is therefore read from the
// transaction, and a taken one skipped when it is not free there. Every take is returned when its job fails and, after the
// hook has run (or the commit failed), when its batch ends: a claim that
// committed is gone from the memory by then and the return does nothing;
// a claim that did not commit is free again before any caller hears its
// answer. Outside group commit, commitMu holds a write transaction from
// its start to its hook, so the memory is never behind it.

// SetLiveProcesses makes ClaimFreeProcess, CountFreeProcesses and
// GetProcess in write transactions answer from free, which the commit
// hook must feed (its Apply). Call it once, before the DB serves writes,
// and only when this DB is the only writer of its store (one server on
// SQLite).
func (db *DB) SetLiveProcesses(free store.LiveProcesses) { db.free = free }

// SetLiveProcessesFor is SetLiveProcesses for a memory that holds some
// fleets only, those holds reports, on a store that other nodes share:
// the fleets a node owns on PostgreSQL, whose every write is this node's
// and goes through its one committer (EnableGroupCommit), in commit order.
// Claims, counts and reads of the other fleets go to the store.
func (db *DB) SetLiveProcessesFor(free store.LiveProcesses, holds func(fleetID string) bool) {
	db.free, db.freeHolds = free, holds
}

// memoryFor reports whether the memory of processes answers for fleetID.
//
// A fleet it did not answer for once in a transaction it does not answer
// for again there: a fleet loaded meanwhile (owned.Memory) is read from
// the store to the transaction's end. The memory knows nothing of what
// the transaction wrote through the store before that: a claim's column
// update, read back from a memory loaded in between, came back free and
// was fed to the memory as free.
func (t *Tx) memoryFor(fleetID string) bool {
	switch {
	case t.db.free == nil:
		return false
	case t.db.freeHolds == nil:
		return true
	case t.storeFleets[fleetID]:
		return false
	case t.db.freeHolds(fleetID):
		return true
	}
	if t.storeFleets == nil {
		t.storeFleets = map[string]bool{}
	}
	t.storeFleets[fleetID] = true
	return false
}

// noteProcess records the process as it now reads, at version: its
// times as the stored document reads them back (no monotonic clock
// reading, the zone the JSON decoding gives), so GetProcess answers alike
// from memory and from the store.
func (t *Tx) noteProcess(p *game.Process, version int64) {
	if !t.feed {
		return
	}
	c := *p
	c.LogPaths = slices.Clone(p.LogPaths)
	for _, tm := range []*time.Time{&c.LastHealthy, &c.DisconnectedAt, &c.TokenExpires, &c.CreationTime, &c.TerminationTime, &c.ActivationTime} {
		*tm = asStored(*tm)
	}
	t.note(store.Change{Kind: store.ProcessPut, ID: p.FleetID, Process: &c, Version: version})
}

// memoryProcess answers GetProcess from the memory inside a write
// transaction, unless this transaction or its batch wrote the process
// (the memory learns that at commit); ok is false when the store must.
func (t *Tx) memoryProcess(fleetID, computeName, pid string) (*game.Process, bool) {
	if !t.memoryFor(fleetID) || !t.writable || t.wrote(store.ProcessKey{FleetID: fleetID, ComputeName: computeName, PID: pid}) {
		return nil, false
	}
	t.readMemory(fleetID)
	return t.db.free.Get(fleetID, computeName, pid)
}

// claimFromMemory is ClaimFreeProcess over the memory (see above).
func (t *Tx) claimFromMemory(fleetID, location, gameSessionID string, maxActivating int) (*game.Process, error) {
	t.readMemory(fleetID)
	for {
		p, ok := t.db.free.Take(fleetID, location, maxActivating)
		if !ok {
			return nil, game.Errorf(game.NotFound, "no free server process in fleet %s location %s", fleetID, location)
		}
		t.takes = append(t.takes, p)
		if t.wrote(store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}) {
			fresh, err := t.GetProcess(p.FleetID, p.ComputeName, p.PID)
			if err != nil {
				return nil, err
			}
			if !fresh.Free() {
				continue
			}
			p = fresh
		}
		var version int64
		if v, known := t.db.free.Version(p.FleetID, p.ComputeName, p.PID); known && t.conn != nil && !t.wrote(keyOf(p)) {
			// Grouped on PostgreSQL: the claim is queued in the pipeline,
			// guarded by the version the memory holds, and a row the
			// memory is out of step with fails the job instead.
			if err := t.claimQueued(p, gameSessionID, v); err != nil {
				return nil, err
			}
			version = v + 1
		} else {
			// The conditions repeat the memory's: a memory out of step
			// with the store skips a process rather than give it two
			// sessions. With the version the memory holds, the claim is
			// an update guarded by it, whose new version is known
			// without asking (RETURNING costs SQLite a temporary table
			// per statement); only a row not at that version is claimed
			// again without the guard.
			if known && !t.wrote(keyOf(p)) {
				ok, err := t.claimAt(p, gameSessionID, v)
				if err != nil {
					return nil, err
				}
				if ok {
					p.GameSessionID = gameSessionID
					t.noteProcess(p, v+1)
					c := *p
					return &c, nil
				}
			}
			var ok bool
			var err error
			version, ok, err = t.claim(p.FleetID, p.ComputeName, p.PID, gameSessionID, true)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		p.GameSessionID = gameSessionID
		t.noteProcess(p, version)
		c := *p
		return &c, nil
	}
}

// claimAtVersion claims a free process from memory: its row at the
// version the memory holds, which every write of a process raises, is
// the one the memory found ACTIVE, connected, healthy and free. The
// status is left out of the conditions on purpose: with
// `status = 'ACTIVE' AND game_session_id = ”` both written out, the
// conditions imply the partial index of free processes' predicate, and
// PostgreSQL's planner, on a table without statistics yet (autovacuum
// off, or not run yet), chose that index over the primary key: a walk
// over every free process of the fleet, filtered, at each claim.
// TestClaimFindsItsRowByKey holds it to the key.
const claimAtVersion = `UPDATE processes SET game_session_id = ?, version = version + 1 WHERE fleet_id = ? AND compute = ? AND pid = ?
		AND game_session_id = '' AND connected = 1 AND healthy = 1 AND version = ?`

// claimAt claims free process p for gameSessionID if its row is at
// version, with the memory's conditions.
func (t *Tx) claimAt(p *game.Process, gameSessionID string, version int64) (bool, error) {
	res, err := t.exec(claimAtVersion, gameSessionID, p.FleetID, p.ComputeName, p.PID, version)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// keyOf is p's key.
func keyOf(p *game.Process) store.ProcessKey {
	return store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
}

// errStaleProcess fails a claim made from memory that the store's row
// does not match (see errStale).
var errStaleProcess = errors.New("server process changed in the store but not in memory")

// claimQueued queues the claim of free process p, at version in memory,
// for gameSessionID: its conditions are the memory's, and its version's.
func (t *Tx) claimQueued(p *game.Process, gameSessionID string, version int64) error {
	return t.laterGuarded(func() error {
		return fmt.Errorf("server process %s on compute %s: %w", p.PID, p.ComputeName, errStaleProcess)
	}, claimAtVersion, gameSessionID, p.FleetID, p.ComputeName, p.PID, version)
}

// wrote reports whether this transaction, or an earlier job of its batch
// that succeeded, wrote process k.
func (t *Tx) wrote(k store.ProcessKey) bool {
	if t.written[k] {
		return true
	}
	for _, c := range t.changes {
		if c.Kind == store.ProcessPut && c.Process.FleetID == k.FleetID && c.Process.ComputeName == k.ComputeName && c.Process.PID == k.PID {
			return true
		}
	}
	return false
}

// jobEnded settles the takes of the job that just ran in t: a failed
// job's go back at once; a successful job's wait for the batch's end, and
// the processes it wrote are remembered for the batch's later jobs.
func (t *Tx) jobEnded(ok bool) {
	clear(t.known)
	t.lastWrite = nil
	t.placedJobEnded(ok)
	if t.db.free == nil {
		return
	}
	if ok && t.db.sessions != nil {
		for _, c := range t.changes {
			if c.Kind == store.SessionPut || c.Kind == store.SessionSeats {
				if t.writtenSessions == nil {
					t.writtenSessions = map[string]bool{}
				}
				t.writtenSessions[c.ID] = true
			}
		}
	}
	if !ok {
		for _, p := range t.takes {
			t.db.free.Return(p)
		}
		t.takes = t.takes[:0]
		return
	}
	for _, c := range t.changes {
		if c.Kind == store.ProcessPut {
			if t.written == nil {
				t.written = map[store.ProcessKey]bool{}
			}
			t.written[store.ProcessKey{FleetID: c.Process.FleetID, ComputeName: c.Process.ComputeName, PID: c.Process.PID}] = true
		}
	}
	t.batchTakes = append(t.batchTakes, t.takes...)
	t.takes = t.takes[:0]
}

// batchEnded returns every take of the batch, after its hook has run or
// its commit failed.
func (t *Tx) batchEnded() {
	if t.db.free == nil {
		return
	}
	for _, p := range t.batchTakes {
		t.db.free.Return(p)
	}
	t.batchTakes = nil
}

// LoadProcesses reads, in one read transaction, every process that has
// not ended and visits each as a store.ProcessPut, in no particular
// order: what a store.LiveProcesses is built from at start-up. visit's
// error stops the load.
func (db *DB) LoadProcesses(ctx context.Context, visit func(store.Change) error) error {
	return db.View(ctx, func(stx store.Tx) error {
		t := stx.(*Tx)
		return t.visitProcesses(`SELECT doc, game_session_id, version FROM processes WHERE status <> 'TERMINATED'`, nil, visit)
	})
}

// visitProcesses runs q, which selects a process's doc, game_session_id
// and version, and visits each as a store.ProcessPut; visit's error
// stops it.
func (t *Tx) visitProcesses(q string, args []any, visit func(store.Change) error) error {
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var version int64
		p, err := scanProcess(scanPlus{rows, &version})
		if err != nil {
			return err
		}
		if err := visit(store.Change{Kind: store.ProcessPut, ID: p.FleetID, Process: p, Version: version}); err != nil {
			return err
		}
	}
	return rows.Err()
}
