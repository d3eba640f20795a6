package sqldb

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// outboxLockKey is the PostgreSQL advisory lock that serializes outbox
// appends until commit, so that seqs become visible in increasing order.
const outboxLockKey = 7310_0001

// AppendNotification implements store.OutboxTx.
//
// On PostgreSQL two transactions may take seqs 5 and 6 and commit 6
// first; a tailer that had read 6 would then skip 5. Holding a
// transaction-scoped advisory lock from the append to the commit orders
// the appends by commit. SQLite has one writer and needs nothing.
func (t *Tx) AppendNotification(n *game.Notification) error {
	if t.db.dialect.Name == "postgres" {
		if _, err := t.exec(`SELECT pg_advisory_xact_lock(?)`, int64(outboxLockKey)); err != nil {
			return err
		}
	}
	args := []any{n.ID, store.Millis(n.Time), n.Type, n.Resource, n.Target, string(n.Envelope)}
	var err error
	if t.db.dialect.Name == "postgres" {
		err = t.queryRow(`INSERT INTO outbox (id, time, type, resource, target, envelope)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, args...).Scan(&n.Seq)
	} else {
		n.Seq, err = t.insertSQLite(args)
	}
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "notification %s already exists", n.ID)
	}
	return err
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
	rows, err := t.query(`SELECT seq, id, time, type, resource, target, envelope FROM outbox
		WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
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
