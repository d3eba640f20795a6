package events

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Notifying wraps st so that wake is called after every committed Update
// that appended to the outbox: the application signals "something was
// appended" without knowing who listens. Readers of other nodes' appends
// rely on polling instead.
func Notifying(st store.Store, wake func()) store.Store { return &notifying{Store: st, wake: wake} }

type notifying struct {
	store.Store
	wake func()
}

func (s *notifying) Update(ctx context.Context, fn func(store.Tx) error) error {
	appended := false
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		return fn(&notingTx{Tx: tx, appended: &appended})
	})
	if err == nil && appended {
		s.wake()
	}
	return err
}

// notingTx records that AppendNotification was called.
type notingTx struct {
	store.Tx
	appended *bool
}

func (t *notingTx) AppendNotification(n *game.Notification) error {
	*t.appended = true
	return t.Tx.AppendNotification(n)
}

// UpdateBeat runs the node heartbeat on the store's own connection for it
// when it has one (sqldb.DB.UpdateBeat); a heartbeat appends nothing.
func (s *notifying) UpdateBeat(ctx context.Context, fn func(store.Tx) error) error {
	if b, ok := s.Store.(interface {
		UpdateBeat(context.Context, func(store.Tx) error) error
	}); ok {
		return b.UpdateBeat(ctx, fn)
	}
	return s.Update(ctx, fn)
}
