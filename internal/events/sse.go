package events

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// writeTimeout bounds each write to a stream consumer: a peer that stops
// reading is cut off even if its buffer never fills.
const writeTimeout = 10 * time.Second

// stream serves GET /events as Server-Sent Events: one event per outbox
// notification, "id:" its Seq, "event:" its detail type name, "data:" the
// envelope JSON. A consumer resumes with Last-Event-ID (or ?after=): the
// notifications after it are replayed from the store, then live ones
// follow, with no gap and no repeat.
type stream struct {
	hub       *Hub
	st        store.Store
	auth      *Auth
	heartbeat time.Duration
}

func (s *stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, err := s.auth.check(r); err != nil {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="anylift events", charset="UTF-8"`)
		}
		http.Error(w, err.Error(), status)
		return
	}
	q, err := parseQuery(r.Header.Get("Last-Event-ID"), r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream")
		return
	}
	sub, err := s.hub.subscribe(r.Context(), q.match)
	if err != nil {
		http.Error(w, "event stream unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer s.hub.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c := &consumer{w: bufio.NewWriter(w), rc: http.NewResponseController(w)}
	c.comment("connected")
	if c.flush() != nil {
		return
	}
	last := sub.from
	if q.hasAfter {
		if last, err = s.replay(r.Context(), c, q, sub.from); err != nil {
			return
		}
	}
	s.live(r.Context(), c, sub, last)
}

// replay writes the stored notifications after q.after up to upto and
// returns the last Seq it covered.
func (s *stream) replay(ctx context.Context, c *consumer, q streamQuery, upto int64) (int64, error) {
	last := q.after
	for last < upto {
		var page []*game.Notification
		err := s.st.View(ctx, func(tx store.Tx) (err error) {
			page, err = tx.ListNotifications(last, pageSize)
			return err
		})
		if err != nil || len(page) == 0 {
			return last, err
		}
		for _, n := range page {
			if n.Seq > upto {
				return last, c.flush()
			}
			if q.match(n) {
				c.event(n)
			}
			last = n.Seq
		}
		if err := c.flush(); err != nil {
			return last, err
		}
	}
	return max(last, upto), nil
}

// live writes the hub's notifications after last until the consumer
// leaves, is dropped, or the hub closes, with heartbeats between.
func (s *stream) live(ctx context.Context, c *consumer, sub *subscription, last int64) {
	beat := time.NewTicker(s.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			c.comment("keepalive")
		case n, ok := <-sub.ch:
			if !ok {
				if s.hub.wasDropped(sub) {
					c.comment("dropped: this consumer fell behind; reconnect with Last-Event-ID")
				}
				c.flush()
				return
			}
			if n.Seq > last {
				c.event(n)
				last = n.Seq
			}
			// Write what is queued at once; flush when caught up.
			if len(sub.ch) > 0 {
				continue
			}
		}
		if c.flush() != nil {
			return
		}
	}
}

// consumer writes SSE frames to one response.
type consumer struct {
	w  *bufio.Writer
	rc *http.ResponseController
}

func (c *consumer) event(n *game.Notification) {
	fmt.Fprintf(c.w, "id: %d\nevent: %s\n", n.Seq, oneLine(n.Type))
	for _, line := range strings.Split(string(n.Envelope), "\n") {
		fmt.Fprintf(c.w, "data: %s\n", strings.TrimSuffix(line, "\r"))
	}
	c.w.WriteString("\n")
}

func (c *consumer) comment(text string) { fmt.Fprintf(c.w, ": %s\n\n", text) }

func (c *consumer) flush() error {
	c.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := c.w.Flush(); err != nil {
		return err
	}
	return c.rc.Flush()
}

// oneLine keeps a field value on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", "", "\n", "").Replace(s)
}
