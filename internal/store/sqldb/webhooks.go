package sqldb

import (
	"database/sql"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// WebhookCursor implements store.WebhookTx.
func (t *Tx) WebhookCursor() (int64, error) {
	var seq int64
	err := t.queryRow(`SELECT seq FROM webhook_cursor WHERE id = 1` + t.lock()).Scan(&seq)
	return seq, err
}

// AdvanceWebhookCursor implements store.WebhookTx.
func (t *Tx) AdvanceWebhookCursor(from, to int64) (bool, error) {
	res, err := t.exec(`UPDATE webhook_cursor SET seq = ? WHERE id = 1 AND seq = ?`, to, from)
	return affected(res, err)
}

// AddWebhookDelivery implements store.WebhookTx.
func (t *Tx) AddWebhookDelivery(d *store.WebhookDelivery) error {
	_, err := t.exec(`INSERT INTO webhook_deliveries (seq, target, state, attempts, next_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq) DO NOTHING`,
		d.Seq, d.Target, d.State, d.Attempts, store.Millis(d.NextAttempt))
	return err
}

// ClaimWebhookDeliveries implements store.WebhookTx.
//
// One conditional UPDATE takes the leases: on PostgreSQL a second node
// claiming the same rows waits for the first to commit, then re-checks
// the lease and skips them, so no delivery is held by two owners.
func (t *Tx) ClaimWebhookDeliveries(owner string, now, leaseUntil time.Time, limit int) ([]*store.WebhookDelivery, error) {
	nowMs, until := store.Millis(now), store.Millis(leaseUntil)
	var seqs []int64
	err := t.each(func(r Row) error {
		var s int64
		err := r.Scan(&s)
		seqs = append(seqs, s)
		return err
	}, `UPDATE webhook_deliveries SET owner = ?, lease_until = ?
		WHERE seq IN (SELECT seq FROM webhook_deliveries
			WHERE state = 0 AND next_at <= ? AND lease_until <= ? ORDER BY next_at, seq LIMIT ?)
		AND state = 0 AND lease_until <= ? RETURNING seq`,
		owner, until, nowMs, nowMs, limit, nowMs)
	if err != nil {
		return nil, err
	}
	out := make([]*store.WebhookDelivery, 0, len(seqs))
	for _, s := range seqs {
		d, err := t.getDelivery(s, true)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// WebhookDeliveriesDue implements store.WebhookTx.
func (t *Tx) WebhookDeliveriesDue(now time.Time) (bool, error) {
	nowMs := store.Millis(now)
	var one int
	err := t.queryRow(`SELECT 1 FROM webhook_deliveries WHERE state = 0 AND next_at <= ? AND lease_until <= ? LIMIT 1`, nowMs, nowMs).Scan(&one)
	if errNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

// FinishWebhookAttempt implements store.WebhookTx.
func (t *Tx) FinishWebhookAttempt(d *store.WebhookDelivery, owner string) (bool, error) {
	res, err := t.exec(`UPDATE webhook_deliveries
		SET state = ?, attempts = ?, next_at = ?, last_error = ?, owner = '', lease_until = 0
		WHERE seq = ? AND owner = ?`,
		d.State, d.Attempts, store.Millis(d.NextAttempt), d.LastError, d.Seq, owner)
	return affected(res, err)
}

// GetWebhookDelivery implements store.WebhookTx.
func (t *Tx) GetWebhookDelivery(seq int64) (*store.WebhookDelivery, error) {
	return t.getDelivery(seq, false)
}

func (t *Tx) getDelivery(seq int64, withNotification bool) (*store.WebhookDelivery, error) {
	var d store.WebhookDelivery
	var next, lease int64
	var n game.Notification
	var nTime sql.NullInt64
	var nID, nType, nRes, nTarget, nEnv sql.NullString
	err := t.queryRow(`SELECT d.seq, d.target, d.state, d.attempts, d.next_at, d.owner, d.lease_until, d.last_error,
			o.id, o.time, o.type, o.resource, o.target, o.envelope
		FROM webhook_deliveries d LEFT JOIN outbox o ON o.seq = d.seq WHERE d.seq = ?`, seq).
		Scan(&d.Seq, &d.Target, &d.State, &d.Attempts, &next, &d.Owner, &lease, &d.LastError,
			&nID, &nTime, &nType, &nRes, &nTarget, &nEnv)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "webhook delivery %d not found", seq)
	}
	if err != nil {
		return nil, err
	}
	d.NextAttempt, d.LeaseUntil = store.FromMillis(next), store.FromMillis(lease)
	if withNotification && nID.Valid {
		n.Seq, n.ID, n.Time = d.Seq, nID.String, store.FromMillis(nTime.Int64)
		n.Type, n.Resource, n.Target, n.Envelope = nType.String, nRes.String, nTarget.String, []byte(nEnv.String)
		d.Notification = &n
	}
	return &d, nil
}

// PruneOutbox implements store.WebhookTx.
func (t *Tx) PruneOutbox(before time.Time) (int, error) {
	res, err := t.exec(`DELETE FROM outbox WHERE time < ?
		AND seq <= (SELECT seq FROM webhook_cursor WHERE id = 1)
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.seq = outbox.seq AND d.state = 0)`,
		store.Millis(before))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	_, err = t.exec(`DELETE FROM webhook_deliveries WHERE state <> 0
		AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.seq = webhook_deliveries.seq)`)
	return int(n), err
}
