package sqldb

import (
	"math"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// AppendNotification implements store.OutboxTx.
//
// On PostgreSQL two transactions may take seqs 5 and 6 and commit 6
// first; a reader that went past 6 would then skip 5. Appends do not wait
// for each other: each appending transaction holds the outbox's append
// lock in shared mode until it ends, and readers read only up to the
// settled horizon (outboxHorizon), below which every seq has been
// committed or abandoned. SQLite has one writer and needs neither.
func (t *Tx) AppendNotification(n *game.Notification) error {
	if t.db.dialect.Name == "postgres" && !t.appending {
		if err := t.later(nil, `SELECT pg_advisory_xact_lock_shared(?)`, t.db.horizon.key); err != nil {
			return err
		}
		t.appending = true
	}
	args := []any{n.ID, store.Millis(n.Time), n.Type, n.Resource, n.Target, string(n.Envelope)}
	taken := func(err error) error {
		if t.isUnique(err) {
			return game.Errorf(game.Conflict, "notification %s already exists", n.ID)
		}
		return err
	}
	if t.db.dialect.Name == "postgres" {
		// Queued: nothing the job does next waits for the seq, which
		// arrives with the answer of the round trip that carries the
		// insert (pipeline.go), by the transaction's commit at the latest.
		return t.laterRow(func(row Row) error { return row.Scan(&n.Seq) }, taken, false,
			`INSERT INTO outbox (id, time, type, resource, target, envelope) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, args...)
	}
	var err error
	n.Seq, err = t.insertSQLite(args)
	return taken(err)
}

// insertSQLite appends an outbox row on SQLite and returns its seq. It
// reads the rowid the insert assigned instead of using RETURNING: SQLite
// runs RETURNING as a trigger, which makes the insert open a statement
// journal, and inside a group-commit savepoint closing that journal costs
// time that grows with everything the savepoint has written.
func (t *Tx) insertSQLite(args []any) (int64, error) {
	res, err := t.exec(`INSERT INTO outbox (id, time, type, resource, target, envelope)
		VALUES (?, ?, ?, ?, ?, ?)`, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// ListNotifications implements store.OutboxTx.
func (t *Tx) ListNotifications(after int64, limit int) ([]*game.Notification, error) {
	upto := int64(math.MaxInt64)
	if t.db.dialect.Name == "postgres" {
		var err error
		if upto, err = t.db.horizon.settle(t); err != nil {
			return nil, err
		}
		if upto <= after {
			return nil, nil
		}
	}
	rows, err := t.query(`SELECT seq, id, time, type, resource, target, envelope FROM outbox
		WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, after, upto, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*game.Notification
	for rows.Next() {
		var n game.Notification
		var ms int64
		var env string
		if err := rows.Scan(&n.Seq, &n.ID, &ms, &n.Type, &n.Resource, &n.Target, &env); err != nil {
			return nil, err
		}
		n.Time = store.FromMillis(ms)
		n.Envelope = []byte(env)
		out = append(out, &n)
	}
	return out, rows.Err()
}

// LastNotificationSeq implements store.OutboxTx.
func (t *Tx) LastNotificationSeq() (int64, error) {
	if t.db.dialect.Name == "postgres" {
		return t.db.horizon.end(t)
	}
	var seq int64
	err := t.queryRow(`SELECT COALESCE(MAX(seq), 0) FROM outbox`).Scan(&seq)
	return seq, err
}

// DeleteNotificationsBefore implements store.OutboxTx.
func (t *Tx) DeleteNotificationsBefore(before time.Time) (int, error) {
	res, err := t.exec(`DELETE FROM outbox WHERE time < ?`, store.Millis(before))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
