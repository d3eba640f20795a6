package sqldb

import (
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Processes keep the whole record as JSON in doc and, as columns, what is
// queried: status, health, connection, the hosted session, timers.

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *Tx) PutProcess(p *game.Process) error {
	if err := t.fence(p.FleetID); err != nil {
		return err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	args := []any{p.FleetID, p.ComputeName, p.PID, p.Location, p.Status, flag(p.Healthy), flag(p.Connected), p.GameSessionID,
		store.Millis(p.LastHealthy), store.Millis(p.DisconnectedAt), store.Millis(p.TokenExpires),
		store.Millis(p.CreationTime), string(doc), store.Millis(p.ActivationTime), store.Millis(p.TerminationTime),
		flag(p.Abnormal)}
	q := processUpsert
	if t.db.dialect.Name == "postgres" {
		// The row updated where it is, inserted where it is not (see
		// processUpdateFirst): the update's arguments, then the insert's.
		q = processUpdateFirst
		args = append([]any{args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[12],
			args[13], args[14], args[15], args[0], args[1], args[2]}, args...)
	}
	var version int64
	err = t.queryRow(q, args...).Scan(&version)
	if err == nil {
		t.noteProcess(p, version)
	}
	return err
}

// processUpsert writes a process whether or not its row exists.
const processUpsert = `INSERT INTO processes (fleet_id, compute, pid, location, status, healthy, connected, game_session_id,
			last_heartbeat, disconnected_at, token_expires, created, doc, activated, ended, abnormal, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (fleet_id, compute, pid) DO UPDATE SET location = excluded.location, status = excluded.status,
			healthy = excluded.healthy, connected = excluded.connected, game_session_id = excluded.game_session_id,
			last_heartbeat = excluded.last_heartbeat, disconnected_at = excluded.disconnected_at,
			token_expires = excluded.token_expires, doc = excluded.doc, activated = excluded.activated,
			ended = excluded.ended, abnormal = excluded.abnormal, version = processes.version + 1
		RETURNING version`

// processUpdateFirst is processUpsert on PostgreSQL, in one statement
// that updates the row where it exists and inserts it (as processUpsert,
// should another transaction insert it first) where it does not. An
// INSERT … ON CONFLICT DO UPDATE that meets the row locks it before
// updating it, and PostgreSQL writes that lock to the WAL as a record of
// its own (Heap/LOCK) and dirties the page for it; a plain UPDATE locks
// the row as part of the update, with no record of its own. Every write
// of a process but its first finds the row, so each saves one WAL record
// (docs/benchmarks.md, "Row locks per placement"). What the statement
// writes, and what it waits for, is what processUpsert would: both take
// the row's lock, the newest version of the row is the one changed
// (read committed), and created is kept.
const processUpdateFirst = `WITH u AS (
			UPDATE processes SET location = ?, status = ?, healthy = ?, connected = ?, game_session_id = ?,
				last_heartbeat = ?, disconnected_at = ?, token_expires = ?, doc = ?, activated = ?,
				ended = ?, abnormal = ?, version = version + 1
			WHERE fleet_id = ? AND compute = ? AND pid = ? RETURNING version),
		i AS (
			INSERT INTO processes (fleet_id, compute, pid, location, status, healthy, connected, game_session_id,
				last_heartbeat, disconnected_at, token_expires, created, doc, activated, ended, abnormal, version)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 WHERE NOT EXISTS (SELECT 1 FROM u)
			ON CONFLICT (fleet_id, compute, pid) DO UPDATE SET location = excluded.location, status = excluded.status,
				healthy = excluded.healthy, connected = excluded.connected, game_session_id = excluded.game_session_id,
				last_heartbeat = excluded.last_heartbeat, disconnected_at = excluded.disconnected_at,
				token_expires = excluded.token_expires, doc = excluded.doc, activated = excluded.activated,
				ended = excluded.ended, abnormal = excluded.abnormal, version = processes.version + 1
			RETURNING version)
		SELECT version FROM u UNION ALL SELECT version FROM i`

// claim gives free process (compute, pid) of fleetID the game session,
// when it is still free and, with strict, still connected, healthy and
// ACTIVE: one conditional update of the game_session_id column (which
// scanProcess lays over the doc). ok is false when it was not.
func (t *Tx) claim(fleetID, compute, pid, gameSessionID string, strict bool) (version int64, ok bool, err error) {
	q := `UPDATE processes SET game_session_id = ?, version = version + 1 WHERE fleet_id = ? AND compute = ? AND pid = ?
		AND game_session_id = ''`
	if strict {
		q += ` AND status = 'ACTIVE' AND connected = 1 AND healthy = 1`
	}
	err = t.queryRow(q+` RETURNING version`, gameSessionID, fleetID, compute, pid).Scan(&version)
	if errNoRows(err) {
		return 0, false, nil
	}
	return version, err == nil, err
}

// scanProcess reads a doc and overlays the claimable column.
func scanProcess(sc interface{ Scan(...any) error }) (*game.Process, error) {
	var doc, gs string
	if err := sc.Scan(&doc, &gs); err != nil {
		return nil, err
	}
	var p game.Process
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, err
	}
	p.GameSessionID = gs
	return &p, nil
}

func (t *Tx) GetProcess(fleetID, computeName, pid string) (*game.Process, error) {
	if p, ok := t.memoryProcess(fleetID, computeName, pid); ok {
		return p, nil
	}
	p, err := scanProcess(t.queryRow(`SELECT doc, game_session_id FROM processes WHERE fleet_id = ? AND compute = ? AND pid = ?`+t.lock(),
		fleetID, computeName, pid))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "server process %s on compute %s not found", pid, computeName)
	}
	return p, err
}

// ClaimFreeProcess reads only the keys of a few candidates and claims one
// with a conditional update of its game_session_id column (which
// scanProcess lays over the doc), so a claim writes one column, not the
// whole record, and decodes one doc.
func (t *Tx) ClaimFreeProcess(fleetID, location, gameSessionID string, maxActivating int) (*game.Process, error) {
	if err := t.fence(fleetID); err != nil {
		return nil, err
	}
	if t.memoryFor(fleetID) {
		p, err := t.claimFromMemory(fleetID, location, gameSessionID, maxActivating)
		if !game.IsKind(err, game.NotFound) || t.memoryFor(fleetID) {
			return p, err
		}
		// The memory stopped holding the fleet meanwhile: ask the store.
	}
	if t.lock() != "" && maxActivating > 0 {
		return t.claimCapped(fleetID, location, gameSessionID, maxActivating)
	}
	q := `SELECT compute, pid FROM processes p
		WHERE fleet_id = ? AND location = ? AND status = 'ACTIVE' AND game_session_id = '' AND connected = 1 AND healthy = 1`
	args := []any{fleetID, location}
	if maxActivating > 0 {
		q += ` AND (SELECT COUNT(*) FROM game_sessions g WHERE g.fleet_id = p.fleet_id AND g.compute = p.compute AND g.status = 'ACTIVATING') < ?`
		args = append(args, maxActivating)
	}
	var candidates [][2]string
	var err error
	if t.lock() != "" {
		// Concurrent claims on PostgreSQL would all wait on the row lock
		// of the same oldest process: each locks the first one no other
		// holds. One row only, so a claim never hides from the others
		// processes it will not take.
		candidates, err = t.claimCandidates(q+` ORDER BY created, pid LIMIT 1 FOR UPDATE OF p SKIP LOCKED`, args)
		if err == nil && len(candidates) == 0 {
			// Every free process is locked by another transaction: a
			// claim, or a write of the process's own (a heartbeat). Wait
			// for them: a process another claim took is then passed
			// over (PostgreSQL checks the row again once it is
			// unlocked), and one that a heartbeat held is taken.
			candidates, err = t.claimCandidates(q+` ORDER BY created, pid LIMIT 1 FOR UPDATE OF p`, args)
		}
	} else {
		candidates, err = t.claimCandidates(q+` ORDER BY created, pid LIMIT 8`, args)
	}
	if err != nil {
		return nil, err
	}
	// The claim is a conditional update, so two nodes (or two transactions
	// on PostgreSQL) never give one process two sessions.
	for _, c := range candidates {
		version, ok, err := t.claim(fleetID, c[0], c[1], gameSessionID, false)
		if err != nil {
			return nil, err
		}
		if ok {
			p, err := t.GetProcess(fleetID, c[0], c[1])
			if err == nil {
				t.noteProcess(p, version)
			}
			return p, err
		}
	}
	return nil, game.Errorf(game.NotFound, "no free server process in fleet %s location %s", fleetID, location)
}

// claimCandidates runs a claim's query of free processes and returns
// their (compute, pid).
func (t *Tx) claimCandidates(q string, args []any) ([][2]string, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// claimCapped is ClaimFreeProcess on PostgreSQL under an activation cap.
// Under read committed the cap's count does not see the sessions that
// concurrent claims on the same compute have not committed yet, so each
// claim takes a transaction lock on its candidate's compute and counts
// again under it (a new statement sees what the previous holder
// committed). A compute found at its cap is left out and the next
// candidate is tried.
func (t *Tx) claimCapped(fleetID, location, gameSessionID string, maxActivating int) (*game.Process, error) {
	var full []any
	for {
		q := `SELECT compute, pid FROM processes p
			WHERE fleet_id = ? AND location = ? AND status = 'ACTIVE' AND game_session_id = '' AND connected = 1 AND healthy = 1
			AND (SELECT COUNT(*) FROM game_sessions g WHERE g.fleet_id = p.fleet_id AND g.compute = p.compute AND g.status = 'ACTIVATING') < ?`
		args := []any{fleetID, location, maxActivating}
		if len(full) > 0 {
			q += ` AND compute NOT IN (?` + strings.Repeat(`, ?`, len(full)-1) + `)`
			args = append(args, full...)
		}
		var compute, pid string
		err := t.queryRow(q+` ORDER BY created, pid LIMIT 1 FOR UPDATE OF p SKIP LOCKED`, args...).Scan(&compute, &pid)
		if errNoRows(err) {
			return nil, game.Errorf(game.NotFound, "no free server process in fleet %s location %s", fleetID, location)
		}
		if err != nil {
			return nil, err
		}
		if _, err := t.exec(`SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))`, fleetID, compute); err != nil {
			return nil, err
		}
		var n int
		err = t.queryRow(`SELECT COUNT(*) FROM game_sessions WHERE fleet_id = ? AND compute = ? AND status = 'ACTIVATING'`,
			fleetID, compute).Scan(&n)
		if err != nil {
			return nil, err
		}
		if n >= maxActivating {
			full = append(full, compute)
			continue
		}
		version, ok, err := t.claim(fleetID, compute, pid, gameSessionID, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // not free after all (the row lock makes this rare)
		}
		p, err := t.GetProcess(fleetID, compute, pid)
		if err == nil {
			t.noteProcess(p, version)
		}
		return p, err
	}
}

type processCursor struct {
	C int64  `json:"c"`
	F string `json:"f"`
	K string `json:"k"`
	P string `json:"p"`
}

func (t *Tx) ListProcesses(fleetID, status string, p store.Page) ([]*game.Process, string, error) {
	var cur processCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	q := `SELECT doc, game_session_id FROM processes WHERE (? = '' OR fleet_id = ?)`
	args := []any{fleetID, fleetID}
	if status == "" {
		q += ` AND status <> 'TERMINATED'`
	} else {
		q += ` AND status = ?`
		args = append(args, status)
	}
	q += ` AND (created > ? OR (created = ? AND (fleet_id > ? OR (fleet_id = ? AND (compute > ? OR (compute = ? AND pid > ?))))))
		ORDER BY created, fleet_id, compute, pid LIMIT ?`
	args = append(args, cur.C, cur.C, cur.F, cur.F, cur.K, cur.K, cur.P, n+1)
	if p.Token == "" {
		args[len(args)-8] = int64(-1)
	}
	out, err := t.queryProcesses(q, args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		l := out[n-1]
		next = encodeCursor(processCursor{store.Millis(l.CreationTime), l.FleetID, l.ComputeName, l.PID})
	}
	return out, next, nil
}

func (t *Tx) StaleProcesses(lostBefore, unhealthyBefore, refreshBefore time.Time, max int) ([]*game.Process, error) {
	owned, ownedArgs := t.ownedOnly("fleet_id")
	return t.queryProcesses(`SELECT doc, game_session_id FROM processes WHERE status <> 'TERMINATED' AND (
			(connected = 0 AND disconnected_at <= ?) OR
			(status = 'ACTIVE' AND last_heartbeat <= ?) OR
			(connected = 1 AND token_expires > 0 AND token_expires <= ?))`+owned+`
		ORDER BY created LIMIT ?`,
		append(append([]any{store.Millis(lostBefore), store.Millis(unhealthyBefore), store.Millis(refreshBefore)}, ownedArgs...), max)...)
}

func (t *Tx) NextStale(lostGrace, unhealthyTimeout, refreshMargin time.Duration) (time.Time, error) {
	var due [3]sql.NullInt64
	err := t.queryRow(`SELECT MIN(CASE WHEN connected = 0 THEN disconnected_at + ? END),
			MIN(CASE WHEN status = 'ACTIVE' THEN last_heartbeat + ? END),
			MIN(CASE WHEN connected = 1 AND token_expires > 0 THEN token_expires - ? END)
		FROM processes WHERE status <> 'TERMINATED'`,
		lostGrace.Milliseconds(), unhealthyTimeout.Milliseconds(), refreshMargin.Milliseconds()).Scan(&due[0], &due[1], &due[2])
	if err != nil {
		return time.Time{}, err
	}
	var first time.Time
	for _, d := range due {
		// A time at or before the epoch (a disconnection or report never
		// recorded) is due at once: its millisecond.
		if at := time.UnixMilli(max(d.Int64, 1)).UTC(); d.Valid && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, nil
}

// queryProcesses runs q, which selects a process's doc and
// game_session_id, and returns the processes it reads.
func (t *Tx) queryProcesses(q string, args ...any) ([]*game.Process, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*game.Process
	for rows.Next() {
		p, err := scanProcess(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (t *Tx) CountActiveProcesses(fleetID string) (map[string]int, error) {
	rows, err := t.query(`SELECT location, COUNT(*) FROM processes WHERE fleet_id = ? AND status = 'ACTIVE' GROUP BY location`, fleetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var loc string
		var n int
		if err := rows.Scan(&loc, &n); err != nil {
			return nil, err
		}
		out[loc] = n
	}
	return out, rows.Err()
}
