// Package events delivers the store's outbox to subscribers: a
// Server-Sent Events stream on the API listener (GET /events) and
// webhooks for notifications whose target is an http(s) URL. Every node
// tails the same outbox by Seq, so a consumer may resume on any node from
// the last event id it saw, and webhook delivery state lives in the store,
// shared by the nodes through leases.
package events

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Config tunes the event service; zero values take the defaults.
type Config struct {
	// Poll is how often the outbox is read for appends made by other
	// nodes (500 ms); local commits wake the readers at once. It is also
	// how often the webhook deliverer looks for due deliveries it was not
	// told of (other nodes', leases that ran out).
	Poll time.Duration
	// Heartbeat is the interval of comment lines on idle streams (15 s).
	Heartbeat time.Duration
	// Buffer is how many notifications a stream consumer may lag behind
	// before it is dropped (1024).
	Buffer int
	// Retention is how long notifications are kept for resuming consumers
	// (24 h); undelivered webhook notifications are kept longer, until
	// their attempts are exhausted.
	Retention time.Duration
	// PruneEvery is the interval of the retention sweep (1 min).
	PruneEvery time.Duration
	Webhook    WebhookConfig
	Auth       Auth
	// OnWebhookAttempt, when set, is called after each webhook attempt
	// has been recorded in the store, with the delivery as recorded (for
	// metrics and tests).
	OnWebhookAttempt func(store.WebhookDelivery)
	// Now is the clock of webhook scheduling and retention (time.Now).
	Now func() time.Time
	Log *slog.Logger
}

func (c *Config) defaults() {
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Buffer <= 0 {
		c.Buffer = 1024
	}
	if c.Retention <= 0 {
		c.Retention = 24 * time.Hour
	}
	if c.PruneEvery <= 0 {
		c.PruneEvery = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.Webhook.defaults()
}

// Service is the event stream, the webhook deliverer and the retention
// sweep of one node.
type Service struct {
	cfg       Config
	st        store.Store
	hub       *Hub
	hooks     *deliverer
	stream    *stream
	wake      chan struct{} // wakes the deliverer
	lastPrune time.Time
}

// New returns the service over st. Nothing runs before Run.
func New(st store.Store, cfg Config) *Service {
	cfg.defaults()
	s := &Service{cfg: cfg, st: st, wake: make(chan struct{}, 1)}
	s.hub = newHub(st, cfg.Poll, cfg.Buffer, cfg.Log)
	s.hooks = &deliverer{st: st, cfg: cfg.Webhook, now: cfg.Now, log: cfg.Log, owner: game.NewUUID(), skipped: map[string]bool{},
		observe: cfg.OnWebhookAttempt, claimEvery: cfg.Poll, wake: s.wakeDeliverer}
	// The deliverer follows what the tailer reads rather than reading
	// the outbox again (deliverer.fed).
	s.hub.read = s.hooks.fed
	s.stream = &stream{hub: s.hub, st: st, auth: &s.cfg.Auth, heartbeat: cfg.Heartbeat}
	// One reader may settle notifications another found unsettled
	// moments before (PostgreSQL): that one reads again at once.
	if o, ok := st.(interface{ OnOutboxSettled(func()) }); ok {
		o.OnOutboxSettled(s.Wake)
	}
	return s
}

// Handler serves GET /events.
func (s *Service) Handler() http.Handler { return s.stream }

// Hub is the stream's tailer.
func (s *Service) Hub() *Hub { return s.hub }

// Wake tells the readers that something was appended to the outbox. It
// never blocks; it is what Notifying calls after a commit that appended.
func (s *Service) Wake() {
	s.hub.Wake()
	s.wakeDeliverer()
}

// wakeDeliverer wakes the webhook loop alone. It never blocks.
func (s *Service) wakeDeliverer() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Shutdown ends the open streams (for http.Server.RegisterOnShutdown,
// which otherwise waits for them) and refuses new ones.
func (s *Service) Shutdown() { s.hub.Close() }

// Run tails the outbox and delivers webhooks until ctx ends; it returns
// once both loops have stopped.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.hub.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.deliver(ctx)
	}()
	wg.Wait()
}

// minPass is the least time from one pass of the deliverer to the next
// when the first found nothing more to do at once. Every commit that
// appends wakes it, and every node's deliverer reads every node's
// notifications: under load, a pass per wake would read the outbox as
// often as the nodes commit, a few notifications each time, and pay a
// read transaction (and a claim) for each. Paced, a pass takes what some
// milliseconds brought, and a webhook's first attempt waits at most this
// much longer.
const minPass = 50 * time.Millisecond

// deliver is the webhook and retention loop.
func (s *Service) deliver(ctx context.Context) {
	for {
		start := time.Now()
		busy := s.Step(ctx)
		if ctx.Err() != nil {
			return
		}
		if busy {
			continue
		}
		if !wait(ctx, s.wake, s.hub.nextPoll()) {
			return
		}
		if rest := minPass - time.Since(start); rest > 0 && !wait(ctx, nil, rest) {
			return
		}
	}
}

// wait blocks until a receive from wake (nil: none), d, or ctx's end
// (false).
func wait(ctx context.Context, wake <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return true
}

// Step runs one round of webhook work at the service clock's now:
// enqueue new notifications, attempt the due deliveries, and prune when
// the sweep is due. It reports whether there may be more to do at once.
func (s *Service) Step(ctx context.Context) bool {
	more, err := s.hooks.enqueue(ctx)
	if err != nil && ctx.Err() == nil {
		s.cfg.Log.Warn("events: reading the outbox for webhooks failed", "err", err)
	}
	ds, err := s.hooks.claim(ctx)
	if err != nil && ctx.Err() == nil {
		s.cfg.Log.Warn("events: claiming webhook deliveries failed", "err", err)
	}
	s.hooks.deliverAll(ctx, ds)
	if now := s.cfg.Now(); now.Sub(s.lastPrune) >= s.cfg.PruneEvery {
		s.lastPrune = now
		// The sweep keeps what is behind the cursor: first the cursor up
		// to what the deliverer passed over.
		if err := s.hooks.settle(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("events: moving the webhook cursor failed", "err", err)
		}
		if _, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("events: retention sweep failed", "err", err)
		}
	}
	return more || len(ds) > 0
}

// Prune deletes notifications older than the retention, except those
// with webhook attempts still to come, and returns how many it deleted.
func (s *Service) Prune(ctx context.Context) (int, error) {
	var n int
	err := s.st.Update(ctx, func(tx store.Tx) (err error) {
		n, err = tx.PruneOutbox(s.cfg.Now().Add(-s.cfg.Retention))
		return err
	})
	return n, err
}
