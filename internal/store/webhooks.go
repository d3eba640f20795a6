package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// Webhook delivery states.
const (
	WebhookPending   = 0 // waiting for an attempt, or being attempted
	WebhookDelivered = 1 // a 2xx was received
	WebhookFailed    = 2 // every attempt failed; given up
)

// WebhookDelivery is the delivery state of one outbox notification whose
// target is a webhook URL.
type WebhookDelivery struct {
	// Seq is the notification's outbox position (one delivery per Seq).
	Seq    int64
	Target string
	State  int
	// Attempts is how many attempts have finished (answered or not).
	Attempts int
	// NextAttempt is when the delivery is due (again).
	NextAttempt time.Time
	// Owner and LeaseUntil name the deliverer that claimed it and until
	// when; a lease that has run out may be claimed by another.
	Owner      string
	LeaseUntil time.Time
	LastError  string
	// Notification is filled by ClaimWebhookDeliveries.
	Notification *game.Notification
}

// WebhookTx keeps webhook delivery state: a cursor over the outbox up to
// which notifications have been considered for delivery, and one row per
// delivery. Claims are leases taken by conditional updates, so several
// nodes may deliver from one database without delivering a notification
// twice at the same time.
type WebhookTx interface {
	// WebhookCursor is the outbox Seq up to which notifications have been
	// enqueued (0 at first). Inside Update it locks the cursor.
	WebhookCursor() (int64, error)
	// AdvanceWebhookCursor moves the cursor from from to to and reports
	// false, changing nothing, when it no longer stands at from.
	AdvanceWebhookCursor(from, to int64) (bool, error)
	// AddWebhookDelivery stores d as pending unless a delivery for d.Seq
	// exists (then it does nothing).
	AddWebhookDelivery(d *WebhookDelivery) error
	// WebhookDeliveriesDue reports whether a pending delivery is due at
	// now with its lease run out: whether ClaimWebhookDeliveries would
	// claim one. It reads only, so a read transaction may ask it.
	WebhookDeliveriesDue(now time.Time) (bool, error)
	// ClaimWebhookDeliveries leases to owner, until leaseUntil, up to limit
	// pending deliveries due at now whose lease has run out, and returns
	// them with their notifications, earliest due first.
	ClaimWebhookDeliveries(owner string, now, leaseUntil time.Time, limit int) ([]*WebhookDelivery, error)
	// FinishWebhookAttempt stores d's State, Attempts, NextAttempt and
	// LastError and releases the lease, if owner still holds it; it
	// reports false, changing nothing, otherwise.
	FinishWebhookAttempt(d *WebhookDelivery, owner string) (bool, error)
	// GetWebhookDelivery returns the delivery of seq (NotFound if none).
	GetWebhookDelivery(seq int64) (*WebhookDelivery, error)
	// PruneOutbox deletes notifications older than before that are behind
	// the webhook cursor and have no pending delivery, with their finished
	// deliveries, and returns how many notifications it deleted.
	PruneOutbox(before time.Time) (int, error)
}
