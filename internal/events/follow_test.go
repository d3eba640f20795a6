package events

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/store"
)

// webhookReads counts the deliverer's reads of the stored cursor and of
// due deliveries, in read and write transactions alike.
type webhookReads struct {
	store.Store
	cursorReads, dueReads atomic.Int64
}

func (c *webhookReads) View(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.View(ctx, func(tx store.Tx) error { return fn(&webhookReadsTx{tx, c}) })
}

func (c *webhookReads) Update(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(&webhookReadsTx{tx, c}) })
}

type webhookReadsTx struct {
	store.Tx
	c *webhookReads
}

func (t *webhookReadsTx) WebhookCursor() (int64, error) {
	t.c.cursorReads.Add(1)
	return t.Tx.WebhookCursor()
}

func (t *webhookReadsTx) WebhookDeliveriesDue(now time.Time) (bool, error) {
	t.c.dueReads.Add(1)
	return t.Tx.WebhookDeliveriesDue(now)
}

// The deliverer follows what the stream's tailer reads: notifications
// without a webhook cost it no read of the store, one with a webhook is
// enqueued and attempted at the deliverer's next step, and what was
// appended before the tailer started is read from the store, webhooks
// included. Due deliveries are looked for only when some may be due.
func TestDelivererFollowsTheTailer(t *testing.T) {
	base := openSQLite(t)
	st := &webhookReads{Store: base}
	clock := time.Unix(1_000_000, 0)
	var logged bytes.Buffer
	s := New(st, Config{Log: slog.New(slog.NewTextHandler(&logged, nil)), Now: func() time.Time { return clock }, Poll: time.Hour,
		PruneEvery: 24 * time.Hour, Webhook: WebhookConfig{Timeout: time.Second, Backoff: time.Minute}})
	ctx := context.Background()
	delivery := func(seq int64) *store.WebhookDelivery {
		t.Helper()
		var d *store.WebhookDelivery
		if err := base.View(ctx, func(tx store.Tx) (err error) { d, err = tx.GetWebhookDelivery(seq); return err }); err != nil {
			t.Fatalf("delivery of %d: %v", seq, err)
		}
		return d
	}
	cursor := func() int64 {
		t.Helper()
		var c int64
		if err := base.View(ctx, func(tx store.Tx) (err error) { c, err = tx.WebhookCursor(); return err }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Before the tailer starts: a webhook's notification among others.
	add(t, st, "T", "")
	early := add(t, st, "T", "http://127.0.0.1:9/early")
	add(t, st, "T", "")
	if err := s.hub.start(ctx); err != nil {
		t.Fatal(err)
	}
	s.hub.readyOnce.Do(func() { close(s.hub.ready) })
	// The tailer reads while a stream is open.
	sub, err := s.hub.subscribe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Step(ctx) // behind the tailer's start: read from the store
	if d := delivery(early.Seq); d.Attempts != 1 {
		t.Fatalf("the early webhook: %+v, want one attempt", d)
	}

	// Followed: no read of the cursor nor of due deliveries.
	cursorReads, dueReads := st.cursorReads.Load(), st.dueReads.Load()
	var last int64
	for i := range 10 {
		target := ""
		if i%3 == 0 {
			target = "arn:aws:sns:us-west-2:123456789012:topic"
		}
		last = add(t, st, "T", target).Seq
		s.hub.Wake()
		if _, err := s.hub.step(ctx); err != nil {
			t.Fatal(err)
		}
		s.Step(ctx)
	}
	if c, d := st.cursorReads.Load()-cursorReads, st.dueReads.Load()-dueReads; c != 0 || d != 0 {
		t.Errorf("%d cursor reads and %d looks for due deliveries over 10 followed notifications without a webhook, want none", c, d)
	}
	if s.hooks.scanned != last {
		t.Errorf("passed over up to %d, want %d", s.hooks.scanned, last)
	}
	if c := strings.Count(logged.String(), "SNS topic"); c != 1 {
		t.Errorf("%d SNS log lines, want 1:\n%s", c, logged.String())
	}
	// One with a webhook: enqueued and attempted at the next step, the
	// cursor past it.
	add(t, st, "T", "")
	hook := add(t, st, "T", "http://127.0.0.1:9/hook")
	if _, err := s.hub.step(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.wake: // the tailer woke the deliverer
	default:
		t.Error("the tailer read a webhook's notification and did not wake the deliverer")
	}
	s.Step(ctx)
	if d := delivery(hook.Seq); d.Attempts != 1 || d.State != store.WebhookPending {
		t.Fatalf("the webhook: %+v, want one failed attempt", d)
	}
	if c := cursor(); c != hook.Seq {
		t.Errorf("cursor %d, want %d", c, hook.Seq)
	}
	// Its retry is looked for when due, not before.
	dueReads = st.dueReads.Load()
	s.Step(ctx)
	clock = clock.Add(time.Minute - time.Second)
	s.Step(ctx)
	if d := st.dueReads.Load() - dueReads; d != 0 {
		t.Errorf("%d looks for due deliveries before the retry was due", d)
	}
	clock = clock.Add(time.Second)
	s.Step(ctx)
	if d := delivery(hook.Seq); d.Attempts != 2 {
		t.Errorf("the webhook once its retry was due: %+v, want two attempts", d)
	}
	if d := delivery(early.Seq); d.Attempts != 2 {
		t.Errorf("the early webhook once its retry was due: %+v, want two attempts", d)
	}
	// And every poll interval in any case (other nodes' deliveries).
	dueReads = st.dueReads.Load()
	clock = clock.Add(time.Hour)
	s.Step(ctx)
	if d := st.dueReads.Load() - dueReads; d != 1 {
		t.Errorf("%d looks for due deliveries after the poll interval, want 1", d)
	}
	// The last stream closes and the tailer idles: the deliverer reads
	// the outbox itself again.
	s.hub.unsubscribe(sub)
	if _, err := s.hub.step(ctx); err != nil {
		t.Fatal(err)
	}
	unfollowed := add(t, st, "T", "http://127.0.0.1:9/unfollowed")
	s.Step(ctx)
	if d := delivery(unfollowed.Seq); d.Attempts != 1 {
		t.Errorf("a webhook appended while the tailer idles: %+v, want one attempt", d)
	}
}
