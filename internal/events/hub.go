package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// pageSize is how many notifications one read of the outbox returns.
const pageSize = 256

// errClosed is returned by subscribe once the hub has shut down.
var errClosed = errors.New("event stream is shutting down")

// Hub tails the outbox by Seq and fans each notification out to the live
// subscribers. A subscriber whose buffer is full is dropped (its channel
// closed); it never slows the others, the tailer, or the API.
type Hub struct {
	st        store.Store
	poll      time.Duration
	buffer    int
	log       *slog.Logger
	wake      chan struct{}
	ready     chan struct{} // closed once pos is known, or on Close
	readyOnce sync.Once

	// read, when set, is told of every page the tailer reads, after the
	// position it read after (and of that position alone, with no page,
	// when the tailer starts; of -1 when it idles, and reads no more
	// until a subscriber comes): the webhook deliverer follows the outbox
	// through it while it reads (deliverer.fed). It is called by the
	// tailer's goroutine, in order, and must not block.
	read func(after int64, page []*game.Notification)

	mu     sync.Mutex
	pos    int64 // every notification up to pos has been fanned out
	subs   map[*subscription]struct{}
	closed bool
	// idle: the tailer found no subscriber and stopped reading, so pos
	// may be behind the outbox's end; the next subscriber to come reads
	// the end again (subscribe).
	idle bool
}

// subscription is one live consumer: notifications with Seq > from that
// match arrive on ch; ch is closed when the consumer is dropped or the
// hub closes.
type subscription struct {
	from    int64
	match   func(*game.Notification) bool
	ch      chan *game.Notification
	dropped bool // set under Hub.mu when closed for being slow
}

func newHub(st store.Store, poll time.Duration, buffer int, log *slog.Logger) *Hub {
	return &Hub{st: st, poll: poll, buffer: buffer, log: log,
		wake: make(chan struct{}, 1), ready: make(chan struct{}), subs: map[*subscription]struct{}{}}
}

// Wake asks the tailer to read the outbox now. It never blocks.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run tails the outbox until ctx ends, then closes every subscription.
// It starts at the outbox's current end: history is served to each
// subscriber from the store by the stream handler.
func (h *Hub) Run(ctx context.Context) {
	defer h.Close()
	for {
		err := h.start(ctx)
		if err == nil {
			break
		}
		h.log.Warn("event stream: reading the outbox end failed", "err", err)
		if !h.wait(ctx) {
			return
		}
	}
	h.readyOnce.Do(func() { close(h.ready) })
	for {
		more, err := h.step(ctx)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("event stream: reading the outbox failed", "err", err)
		}
		if more {
			continue
		}
		if !h.waitFor(ctx, h.nextPoll()) {
			return
		}
	}
}

// start sets the tailer's position at the outbox's end.
func (h *Hub) start(ctx context.Context) error {
	var last int64
	err := h.st.View(ctx, func(tx store.Tx) (err error) {
		last, err = tx.LastNotificationSeq()
		return err
	})
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.pos = last
	h.mu.Unlock()
	if h.read != nil {
		h.read(last, nil)
	}
	return nil
}

// unsettledPoll is how soon the outbox is read again while notifications
// wait behind transactions in flight (PostgreSQL): they end in
// milliseconds, on this node or another, which may not wake this one.
const unsettledPoll = 5 * time.Millisecond

// nextPoll is how long the tailer may wait before reading again.
func (h *Hub) nextPoll() time.Duration {
	if u, ok := h.st.(interface{ OutboxUnsettled() bool }); ok && u.OutboxUnsettled() {
		return min(h.poll, unsettledPoll)
	}
	return h.poll
}

// wait blocks until a wake, the poll interval, or ctx's end (false).
func (h *Hub) wait(ctx context.Context) bool { return h.waitFor(ctx, h.poll) }

// waitFor blocks until a wake, d, or ctx's end (false).
func (h *Hub) waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-h.wake:
	case <-t.C:
	}
	return true
}

// step reads one page after pos and fans it out; more reports a full page.
// With no subscriber it reads nothing: every node tails the outbox, most
// of them with no stream open, and the notifications each node's
// placements write would otherwise be read by every node once more.
func (h *Hub) step(ctx context.Context) (more bool, err error) {
	h.mu.Lock()
	if len(h.subs) == 0 {
		h.idle = true
		h.mu.Unlock()
		if h.read != nil {
			h.read(-1, nil) // no longer read: those following it read for themselves
		}
		return false, nil
	}
	pos := h.pos
	h.mu.Unlock()
	var page []*game.Notification
	err = h.st.View(ctx, func(tx store.Tx) (err error) {
		page, err = tx.ListNotifications(pos, pageSize)
		return err
	})
	if err != nil || len(page) == 0 {
		return false, err
	}
	if h.read != nil {
		h.read(pos, page)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range page {
		for s := range h.subs {
			if n.Seq <= s.from || (s.match != nil && !s.match(n)) {
				continue
			}
			select {
			case s.ch <- n:
			default:
				s.dropped = true
				h.remove(s)
			}
		}
	}
	h.pos = max(h.pos, page[len(page)-1].Seq)
	return len(page) == pageSize, nil
}

// subscribe registers a consumer of the notifications after the hub's
// position, which it returns as s.from: the caller reads notifications up
// to s.from from the store itself. It waits until the tailer has started.
// When the tailer idled (no subscriber), the position is first moved to
// the outbox's end as it is now, as at the tailer's start.
func (h *Hub) subscribe(ctx context.Context, match func(*game.Notification) bool) (*subscription, error) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	idle := h.idle && len(h.subs) == 0
	h.mu.Unlock()
	var end int64
	if idle {
		if err := h.st.View(ctx, func(tx store.Tx) (err error) {
			end, err = tx.LastNotificationSeq()
			return err
		}); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	if idle && h.idle && len(h.subs) == 0 {
		// Nothing read meanwhile: no subscriber has been fanned anything
		// from pos, and the tailer reads from the end read above.
		h.pos, h.idle = max(h.pos, end), false
	}
	s := &subscription{from: h.pos, match: match, ch: make(chan *game.Notification, h.buffer)}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe removes s if it is still registered.
func (h *Hub) unsubscribe(s *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		h.remove(s)
	}
}

// wasDropped reports whether s was closed for falling behind.
func (h *Hub) wasDropped(s *subscription) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return s.dropped
}

// remove closes and forgets s; h.mu is held.
func (h *Hub) remove(s *subscription) {
	delete(h.subs, s)
	close(s.ch)
}

// Close ends every subscription and refuses new ones, so that open
// streams finish and the HTTP server can shut down. It is idempotent.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for s := range h.subs {
		h.remove(s)
	}
	h.readyOnce.Do(func() { close(h.ready) })
}

// Subscribers is how many consumers are connected.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
