package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// OutboxTx appends and reads subscriber notifications. The outbox is the
// one place events for subscribers come from: every node tails it, so a
// consumer may resume from the last Seq it saw on any node.
type OutboxTx interface {
	// AppendNotification stores n and sets n.Seq, by the time the
	// transaction commits (a pipelined transaction learns it with a
	// later statement's answer). Seqs increase, and a transaction that
	// saw another's commit takes its seqs after that one's; appends of
	// concurrent transactions do not wait for each other.
	AppendNotification(n *game.Notification) error
	// ListNotifications returns up to limit notifications with Seq >
	// after, in Seq order, stopping before any seq that a transaction
	// still in flight may yet commit: so tailing by Seq never skips a
	// notification that commits late.
	ListNotifications(after int64, limit int) ([]*game.Notification, error)
	// LastNotificationSeq is the highest Seq handed out (0 when empty),
	// once every transaction that took a Seq up to it has ended: a
	// tailer starting from it misses nothing that commits later. Call it
	// in a transaction that has not appended (it waits for those that
	// have).
	LastNotificationSeq() (int64, error)
	// DeleteNotificationsBefore removes notifications older than t and
	// returns how many it removed.
	DeleteNotificationsBefore(t time.Time) (int, error)
}
