package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// OutboxTx appends and reads subscriber notifications. The outbox is the
// one place events for subscribers come from: every node tails it, so a
// consumer may resume from the last Seq it saw on any node.
type OutboxTx interface {
	// AppendNotification stores n and sets n.Seq. Seqs are assigned in
	// commit order (on PostgreSQL appends are serialized until commit), so
	// tailing by Seq never skips a notification that commits late.
	AppendNotification(n *game.Notification) error
	// ListNotifications returns up to limit notifications with Seq >
	// after, in Seq order.
	ListNotifications(after int64, limit int) ([]*game.Notification, error)
	// LastNotificationSeq is the highest Seq stored (0 when empty).
	LastNotificationSeq() (int64, error)
	// DeleteNotificationsBefore removes notifications older than t and
	// returns how many it removed.
	DeleteNotificationsBefore(t time.Time) (int, error)
}
