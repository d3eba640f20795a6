package events

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

func openSQLite(t *testing.T) store.Store {
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func add(t *testing.T, st store.Store, typ, target string) *game.Notification {
	n := &game.Notification{ID: game.NewUUID(), Time: time.Now(), Type: typ, Resource: "arn:q", Target: target, Envelope: []byte("{}")}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.AppendNotification(n) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// A subscriber that does not read is dropped when its buffer is full;
// the others still receive everything, and the tailer does not wait.
func TestHubDropsSlowSubscriber(t *testing.T) {
	st := openSQLite(t)
	add(t, st, "Before", "")
	h := newHub(st, time.Hour, 2, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	slow, err := h.subscribe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := h.subscribe(ctx, nil)
	filtered, _ := h.subscribe(ctx, func(n *game.Notification) bool { return n.Type == "Rare" })
	if slow.from == 0 {
		t.Errorf("subscription starts at %d, want the outbox end", slow.from)
	}
	var got []int64
	for i := range 5 {
		n := add(t, st, "Common", "")
		h.Wake()
		got = append(got, (<-fast.ch).Seq)
		if got[i] != n.Seq {
			t.Fatalf("fast got %d, want %d", got[i], n.Seq)
		}
	}
	rare := add(t, st, "Rare", "")
	h.Wake()
	<-fast.ch
	if n := <-filtered.ch; n.Seq != rare.Seq {
		t.Errorf("filtered got %d, want %d", n.Seq, rare.Seq)
	}
	for range slow.ch { // drains the two buffered, then sees it closed
	}
	if !h.wasDropped(slow) || h.wasDropped(fast) || h.Subscribers() != 2 {
		t.Errorf("dropped slow %v fast %v, %d subscribers", h.wasDropped(slow), h.wasDropped(fast), h.Subscribers())
	}
	cancel()
	<-done
	if _, ok := <-fast.ch; ok {
		t.Error("subscription open after the hub stopped")
	}
	if _, err := h.subscribe(context.Background(), nil); err != errClosed {
		t.Errorf("subscribe after close: %v", err)
	}
}

// Notifying wakes after a committed append only.
func TestNotifyingWakesAfterAppendCommits(t *testing.T) {
	woken := 0
	st := Notifying(openSQLite(t), func() { woken++ })
	ctx := context.Background()
	st.Update(ctx, func(tx store.Tx) error { return nil })
	st.Update(ctx, func(tx store.Tx) error {
		tx.AppendNotification(&game.Notification{ID: "a", Time: time.Now(), Type: "T", Resource: "r", Envelope: []byte("{}")})
		return fmt.Errorf("rolled back")
	})
	if woken != 0 {
		t.Fatalf("woken %d times without a committed append", woken)
	}
	st.Update(ctx, func(tx store.Tx) error {
		return tx.AppendNotification(&game.Notification{ID: "b", Time: time.Now(), Type: "T", Resource: "r", Envelope: []byte("{}")})
	})
	if woken != 1 {
		t.Fatalf("woken %d times, want 1", woken)
	}
}

// An SNS target is logged once, not once per event, and its events are
// not enqueued for delivery.
func TestSkippedTargetLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	st := openSQLite(t)
	s := New(st, Config{Log: slog.New(slog.NewTextHandler(&buf, nil))})
	for range 3 {
		add(t, st, "T", "arn:aws:sns:us-west-2:123456789012:topic")
	}
	add(t, st, "T", "ftp://example")
	s.Step(context.Background())
	add(t, st, "T", "arn:aws:sns:us-west-2:123456789012:topic")
	s.Step(context.Background())
	if c := strings.Count(buf.String(), "SNS topic"); c != 1 {
		t.Errorf("%d SNS log lines, want 1:\n%s", c, buf.String())
	}
	if c := strings.Count(buf.String(), "not an http(s) URL"); c != 1 {
		t.Errorf("%d log lines for a bad target, want 1:\n%s", c, buf.String())
	}
}

// The deliverer reads before it writes (webhook.go): notifications
// without a webhook are passed over in memory, and the stored cursor
// follows them only now and then (or before a retention sweep); one with
// a webhook gets its delivery and takes the cursor past it at once.
func TestDelivererWritesTheCursorNowAndThen(t *testing.T) {
	st := openSQLite(t)
	clock := time.Unix(1_000_000, 0)
	s := New(st, Config{Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return clock },
		PruneEvery: time.Hour, Webhook: WebhookConfig{Timeout: time.Second}})
	ctx := context.Background()
	cursor := func() int64 {
		t.Helper()
		var c int64
		if err := st.View(ctx, func(tx store.Tx) (err error) { c, err = tx.WebhookCursor(); return err }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	var last *game.Notification
	for range 3 {
		last = add(t, st, "T", "")
	}
	s.Step(ctx) // the first: the cursor follows at once
	if c := cursor(); c != last.Seq {
		t.Fatalf("cursor %d after the first step, want %d", c, last.Seq)
	}
	first := last
	for range 5 {
		last = add(t, st, "T", "")
	}
	s.Step(ctx)
	if c := cursor(); c != first.Seq {
		t.Errorf("cursor %d after passing over 5 notifications, want it left at %d", c, first.Seq)
	}
	clock = clock.Add(cursorAge)
	s.Step(ctx)
	if c := cursor(); c != last.Seq {
		t.Errorf("cursor %d once %v passed, want %d", c, cursorAge, last.Seq)
	}
	add(t, st, "T", "")
	hook := add(t, st, "T", "http://127.0.0.1:9/hook")
	s.Step(ctx)
	if c := cursor(); c != hook.Seq {
		t.Errorf("cursor %d after a webhook's notification, want %d", c, hook.Seq)
	}
	err := st.View(ctx, func(tx store.Tx) error {
		d, err := tx.GetWebhookDelivery(hook.Seq)
		if err == nil && (d.Target != hook.Target || d.Attempts != 1) {
			t.Errorf("delivery %+v, want one attempt to %s", d, hook.Target)
		}
		return err
	})
	if err != nil {
		t.Errorf("the webhook's delivery: %v", err)
	}
	for range 4 {
		last = add(t, st, "T", "")
	}
	s.Step(ctx)
	clock = clock.Add(time.Hour) // the cursor follows; and a retention sweep, which keeps what is behind it, is due
	s.Step(ctx)
	if c := cursor(); c != last.Seq {
		t.Errorf("cursor %d after the sweep, want %d", c, last.Seq)
	}
}

func TestDelay(t *testing.T) {
	c := WebhookConfig{Backoff: time.Second, MaxBackoff: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := c.delay(i + 1); got != w {
			t.Errorf("delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := c.delay(1000); got != 10*time.Second {
		t.Errorf("delay(1000) = %v", got)
	}
}

func TestRedact(t *testing.T) {
	if got := redact("https://user:pw@hooks.example/x?token=secret#f"); got != "https://hooks.example/x" {
		t.Errorf("redact: %s", got)
	}
}

func TestParseQuery(t *testing.T) {
	good := []struct{ id, q string }{
		{"", ""}, {"0", ""}, {"9223372036854775807", ""}, {"", "after=12"}, {"5", "after=junk"},
		{"", "type=PlacementFulfilled&type=MatchmakingSucceeded,AcceptMatch&resource=arn:aws:gamelift:us-west-2:1:gamesessionqueue/q"},
	}
	for _, g := range good {
		v, _ := url.ParseQuery(g.q)
		if _, err := parseQuery(g.id, v); err != nil {
			t.Errorf("%q %q: %v", g.id, g.q, err)
		}
	}
	bad := []struct{ id, q string }{
		{"-1", ""}, {"9223372036854775808", ""}, {"1e3", ""}, {" 1", ""}, {"", "after=1&after=2"},
		{"", "type="}, {"", "type=a,,b"}, {"", "type=" + strings.Repeat("A", 65)}, {"", "resource=a%00b"}, {"", "x=1"},
		{"", "type=" + strings.Repeat("A,", 50) + "B"},
	}
	for _, b := range bad {
		v, _ := url.ParseQuery(b.q)
		if _, err := parseQuery(b.id, v); err == nil {
			t.Errorf("%q %q: accepted", b.id, b.q)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	f.Add("", "")
	f.Add("42", "type=PlacementFulfilled&resource=arn:q")
	f.Add("", "after=7&type=A,B")
	f.Add("99999999999999999999", "after=%ff")
	f.Add("1", "resource=%00&x=y")
	f.Fuzz(func(t *testing.T, lastID, rawQuery string) {
		v, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		q, err := parseQuery(lastID, v)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Errorf("message too long: %d", len(err.Error()))
			}
			return
		}
		if q.after < 0 || (!q.hasAfter && q.after != 0) {
			t.Errorf("after %d (%v)", q.after, q.hasAfter)
		}
		for typ := range q.types {
			if typ == "" || !isTypeName(typ) || len(typ) > maxTypeLen {
				t.Errorf("type %q accepted", typ)
			}
		}
		if len(q.types) > maxFilterValues || len(q.resources) > maxFilterValues {
			t.Errorf("too many values accepted")
		}
		// A stream line must never be split by what is echoed or matched.
		for r := range q.resources {
			if strings.ContainsAny(r, "\r\n") {
				t.Errorf("resource %q accepted", r)
			}
		}
	})
}

// With no subscriber the tailer reads nothing; the next subscriber starts
// at the outbox's end as it is then, and receives what follows.
func TestHubIdleWithoutSubscribers(t *testing.T) {
	st := &countingViews{Store: openSQLite(t)}
	ctx := context.Background()
	h := newHub(st, time.Hour, 8, slog.New(slog.DiscardHandler))
	h.readyOnce.Do(func() { close(h.ready) }) // the tailer's start: pos 0
	add(t, st, "Before", "")
	last := add(t, st, "Before", "")
	if more, err := h.step(ctx); more || err != nil || st.count() != 0 {
		t.Fatalf("idle step: more %v, err %v, %d reads", more, err, st.count())
	}
	sub, err := h.subscribe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sub.from != last.Seq || st.count() != 1 {
		t.Fatalf("subscription from %d after %d reads, want %d after 1", sub.from, st.count(), last.Seq)
	}
	// A second subscriber joins the tailer where it is, without a read.
	other, _ := h.subscribe(ctx, nil)
	if other.from != last.Seq || st.count() != 1 {
		t.Fatalf("second subscription from %d after %d reads", other.from, st.count())
	}
	n := add(t, st, "After", "")
	if _, err := h.step(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*subscription{sub, other} {
		if got := <-s.ch; got.Seq != n.Seq {
			t.Fatalf("got %d, want %d", got.Seq, n.Seq)
		}
	}
	h.unsubscribe(sub)
	h.unsubscribe(other)
	add(t, st, "Unread", "")
	views := st.count()
	h.step(ctx)
	if st.count() != views {
		t.Fatalf("the tailer read the outbox with no subscriber")
	}
	late := add(t, st, "Late", "")
	again, _ := h.subscribe(ctx, nil)
	if again.from != late.Seq {
		t.Fatalf("subscription after idling from %d, want %d", again.from, late.Seq)
	}
	n = add(t, st, "Next", "")
	h.step(ctx)
	if got := <-again.ch; got.Seq != n.Seq {
		t.Fatalf("got %d, want %d", got.Seq, n.Seq)
	}
}

// countingViews counts the read transactions of a real store, safely
// across goroutines.
type countingViews struct {
	store.Store
	mu    sync.Mutex
	views int
}

func (c *countingViews) View(ctx context.Context, fn func(store.Tx) error) error {
	c.mu.Lock()
	c.views++
	c.mu.Unlock()
	return c.Store.View(ctx, fn)
}

func (c *countingViews) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.views
}

// The deliverer's passes are at least minPass apart when one finds
// nothing more to do, however often commits wake it; a wake inside the
// interval is not lost: the pass after it reads what was appended.
func TestDelivererPacesItsPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &countingViews{Store: openSQLite(t)}
		s := New(st, Config{PruneEvery: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.deliver(ctx) }()
		synctest.Wait() // the first pass, then waiting for a wake
		first := st.count()
		if first == 0 {
			t.Fatal("no pass at the start")
		}
		for range 10 { // ten commits within a few milliseconds
			add(t, st, "T", "")
			s.Wake()
			time.Sleep(time.Millisecond)
			synctest.Wait()
		}
		if n := st.count(); n != first {
			t.Fatalf("%d reads within %v of the first pass, want none", n-first, minPass)
		}
		time.Sleep(minPass)
		synctest.Wait()
		if n := st.count(); n == first {
			t.Fatalf("no pass after %v", minPass)
		}
		if s.hooks.scanned == 0 {
			t.Fatal("the pass after the wakes did not read what they announced")
		}
		cancel()
		<-done
	})
}
