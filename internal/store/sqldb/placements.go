package sqldb

import (
	"database/sql"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// placementInsert and placementValues are a placement's row as every
// insert of one writes it.
const placementInsert = `INSERT INTO placements (id, queue, status, game_session_id, started, deadline, ended, doc)`

func placementValues(p *game.Placement, doc []byte) []any {
	return []any{p.ID, p.QueueName, p.Status, p.GameSessionID, store.Millis(p.StartTime), store.Millis(p.Deadline), endedMillis(p), string(doc)}
}

func (t *Tx) InsertPlacement(p *game.Placement) error {
	doc, err := encodePlacement(p)
	if err != nil {
		return err
	}
	if t.deferring {
		return t.insertPlacementDeferred(p, doc)
	}
	if doc0, ok := t.takeQueueGuard(p.QueueName); ok {
		return t.insertGuardedPlacement(p, doc, doc0)
	}
	// ON CONFLICT rather than a unique violation, which would end a
	// PostgreSQL transaction: the caller may read the placement there.
	res, err := t.exec(placementInsert+` VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, placementValues(p, doc)...)
	inserted, err := affected(res, err)
	if err == nil && !inserted {
		return game.Errorf(game.Conflict, "game session placement %s already exists", p.ID)
	}
	if err == nil {
		t.wrotePlacement(p, doc)
	}
	return err
}

// insertPlacementDeferred is InsertPlacement in a batch whose jobs defer
// their last statements (batch.go): the insert is queued, guarded, with
// the queue's guard in it when that was queued last. One that inserts
// nothing (the id taken, or the queue changed) fails the batch, which runs
// again without deferring, where InsertPlacement answers which it was and
// its caller answers the placement of that id that exists.
func (t *Tx) insertPlacementDeferred(p *game.Placement, doc []byte) error {
	miss := func() error {
		return game.Errorf(game.Conflict, "game session placement %s already exists, or its queue %s changed", p.ID, p.QueueName)
	}
	args := placementValues(p, doc)
	q := placementInsert + ` VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	if queueDoc, ok := t.takeQueueGuard(p.QueueName); ok {
		q = `WITH g AS (SELECT 1 FROM game_session_queues WHERE name = ? AND doc = ? FOR SHARE) ` +
			placementInsert + ` SELECT ?, ?, ?, ?, ?, ?, ?, ? FROM g ON CONFLICT (id) DO NOTHING`
		args = append([]any{p.QueueName, queueDoc}, args...)
	}
	if err := t.laterGuarded(miss, q, args...); err != nil {
		return err
	}
	t.wrotePlacement(p, doc)
	return nil
}

// insertGuardedPlacement is InsertPlacement on a queue taken as last
// read, as queueDoc, whose guard was the job's last statement queued
// (queues.go): one statement locks the queue as the guard would and
// inserts the placement only if the queue is still that document,
// answering both.
func (t *Tx) insertGuardedPlacement(p *game.Placement, doc []byte, queueDoc string) error {
	var guarded, inserted int64
	err := t.queryRow(`WITH g AS (SELECT 1 FROM game_session_queues WHERE name = ? AND doc = ? FOR SHARE),
		i AS (`+placementInsert+` SELECT ?, ?, ?, ?, ?, ?, ?, ? FROM g ON CONFLICT (id) DO NOTHING RETURNING 1)
		SELECT (SELECT count(*) FROM g), (SELECT count(*) FROM i)`,
		append([]any{p.QueueName, queueDoc}, placementValues(p, doc)...)...).Scan(&guarded, &inserted)
	switch {
	case err != nil:
	case guarded == 0:
		// The failure is the job's, whatever it makes of it.
		err = t.queueMoved(p.QueueName)
		if t.failed == nil {
			t.failed = err
		}
	case inserted == 0:
		err = game.Errorf(game.Conflict, "game session placement %s already exists", p.ID)
	default:
		t.wrotePlacement(p, doc)
	}
	return err
}

// scanPlacement reads a placement's document from sc, decoded once
// (placementdocs.go).
func (t *Tx) scanPlacement(sc interface{ Scan(...any) error }) (*game.Placement, error) {
	var doc string
	if err := sc.Scan(&doc); err != nil {
		return nil, err
	}
	return t.readPlacement(doc)
}

func (t *Tx) GetPlacement(id string) (*game.Placement, error) {
	// Read under its lock: its next write needs no guard (placed.go).
	t.readLocked(id)
	p, err := t.scanPlacement(t.queryRow(`SELECT doc FROM placements WHERE id = ?`+t.lock(), id))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "game session placement %s not found", id)
	}
	return p, err
}

func (t *Tx) UpdatePlacement(p *game.Placement) error {
	doc, err := encodePlacement(p)
	if err != nil {
		return err
	}
	miss := func() error {
		return game.Errorf(game.NotFound, "game session placement %s not found", p.ID)
	}
	args := []any{p.Status, p.GameSessionID, store.Millis(p.Deadline), endedMillis(p), string(doc), p.ID}
	// A placement read from memory, or listed without a lock, is written
	// only as it was read (placed.go).
	guard, guardArgs, moved := t.placedGuard(p)
	if moved != nil {
		miss = moved
		args = append(args, guardArgs...)
	}
	err = t.laterGuarded(miss, `UPDATE placements SET status = ?, game_session_id = ?, deadline = ?, ended = ?, doc = ? WHERE id = ?`+guard, args...)
	if err == nil {
		t.wrotePlacement(p, doc)
		t.notePlacement(p)
		t.readLocked(p.ID) // the write holds the row's lock now
	}
	return err
}

func (t *Tx) PlacementOfSession(gameSessionID string) (*game.Placement, error) {
	if p, ok, err := t.memoryPlacement(gameSessionID); ok || err != nil {
		return p, err
	}
	if t.docs != nil {
		// Grouped: the placement's queue, which its fulfilment or end
		// reads next, comes in the same statement, locked as GetQueue
		// locks it, and is kept for GetQueue (docs.go).
		q := `SELECT p.doc, q.name, q.doc FROM placements p LEFT JOIN game_session_queues q ON q.name = p.queue
			WHERE p.status = 'PENDING' AND p.game_session_id = ?`
		if t.lock() != "" {
			q = `SELECT p.doc, q.name, q.doc FROM placements p
				LEFT JOIN LATERAL (SELECT name, doc FROM game_session_queues WHERE name = p.queue FOR SHARE) q ON true
				WHERE p.status = 'PENDING' AND p.game_session_id = ? FOR UPDATE OF p`
		}
		var doc string
		var queue, queueDoc sql.NullString
		err := t.queryRow(q, gameSessionID).Scan(&doc, &queue, &queueDoc)
		if errNoRows(err) {
			return nil, game.Errorf(game.NotFound, "no pending placement of game session %s", gameSessionID)
		}
		if err != nil {
			return nil, err
		}
		if queue.Valid {
			t.docs["queue\x00"+queue.String] = queueDoc.String
		}
		return t.readPlacement(doc)
	}
	p, err := t.scanPlacement(t.queryRow(`SELECT doc FROM placements WHERE status = 'PENDING' AND game_session_id = ?`+t.lock(), gameSessionID))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "no pending placement of game session %s", gameSessionID)
	}
	return p, err
}

func (t *Tx) ListPendingPlacements(q store.PendingQuery, max int) ([]*game.Placement, error) {
	sqlq := `SELECT doc FROM placements WHERE status = 'PENDING'`
	var args []any
	if q.Unplaced {
		sqlq += ` AND game_session_id = ''`
	}
	if q.Queue != "" {
		sqlq += ` AND queue = ?`
		args = append(args, q.Queue)
	}
	if a := q.After; a != nil {
		sqlq += ` AND (started > ? OR (started = ? AND id > ?))`
		args = append(args, store.Millis(a.StartTime), store.Millis(a.StartTime), a.ID)
	}
	if !q.DueBy.IsZero() {
		sqlq += ` AND deadline <= ?`
		args = append(args, store.Millis(q.DueBy))
	}
	sqlq += ` ORDER BY started, id LIMIT ?`
	args = append(args, max)
	var out []*game.Placement
	if q.Unplaced && t.conn != nil && t.docs != nil {
		// The placer's list, pipelined: each placement's queue, which the
		// placer reads next, comes in the same statement, locked as
		// GetQueue locks it, and is kept for GetQueue (docs.go), instead
		// of a round trip per queue. Only for the placements listed:
		// the LIMIT is applied first.
		sqlq = `SELECT p.doc, q.name, q.doc FROM (` + strings.Replace(sqlq, `SELECT doc FROM`, `SELECT doc, queue, started, id FROM`, 1) + `) p
			LEFT JOIN LATERAL (SELECT name, doc FROM game_session_queues WHERE name = p.queue FOR SHARE) q ON true
			ORDER BY p.started, p.id`
		err := t.each(func(r Row) error {
			var doc string
			var queue, queueDoc sql.NullString
			if err := r.Scan(&doc, &queue, &queueDoc); err != nil {
				return err
			}
			p, err := t.readPlacement(doc)
			if err != nil {
				return err
			}
			if queue.Valid {
				t.docs["queue\x00"+queue.String] = queueDoc.String
			}
			out = append(out, p)
			t.readUnlocked(p)
			return nil
		}, sqlq, args...)
		return out, err
	}
	err := t.each(func(r Row) error {
		p, err := t.scanPlacement(r)
		if err == nil {
			out = append(out, p)
			t.readUnlocked(p)
		}
		return err
	}, sqlq, args...)
	return out, err
}

func (t *Tx) CountFreeProcesses(fleetID, location string, max int) (int, error) {
	if t.memoryFor(fleetID) {
		n := t.db.free.Count(fleetID, location, max)
		if n > 0 || t.memoryFor(fleetID) {
			return n, nil
		}
	}
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM (SELECT 1 FROM processes
		WHERE fleet_id = ? AND location = ? AND status = 'ACTIVE' AND game_session_id = '' AND connected = 1 AND healthy = 1 LIMIT ?) f`,
		fleetID, location, max).Scan(&n)
	return n, err
}
