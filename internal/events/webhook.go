package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Headers of a webhook request.
const (
	HeaderEventID   = "X-Anylift-Event-Id"
	HeaderEventType = "X-Anylift-Event-Type"
	HeaderEventSeq  = "X-Anylift-Event-Seq"
	HeaderAttempt   = "X-Anylift-Delivery-Attempt"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256 of the body
	// under the webhook secret.
	HeaderSignature = "X-Anylift-Signature"
)

// Sign returns the HeaderSignature value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// WebhookConfig tunes webhook delivery; zero values take the defaults.
type WebhookConfig struct {
	// Secret signs every request (HeaderSignature); empty: unsigned.
	Secret []byte
	// MaxAttempts is how many attempts a notification gets (12).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt (1 s); each
	// further failure doubles it, up to MaxBackoff (10 min).
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one attempt (10 s).
	Timeout time.Duration
	// Concurrency is how many requests one node has in flight (8).
	Concurrency int
	// Client sends the requests; one that follows no redirects when nil.
	Client *http.Client
}

func (c *WebhookConfig) defaults() {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 12
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Minute
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.Client == nil {
		c.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
}

// delay is the wait after the attempts-th failed attempt.
func (c *WebhookConfig) delay(attempts int) time.Duration {
	d := c.Backoff
	for i := 1; i < attempts && d < c.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.MaxBackoff)
}

// deliverer posts notifications whose target is an http(s) URL, at least
// once, with retries. Its state is in the store (store.WebhookTx), so a
// restart resumes and several nodes share the work: each delivery is
// leased to one node at a time.
type deliverer struct {
	st    store.Store
	cfg   WebhookConfig
	now   func() time.Time
	log   *slog.Logger
	owner string // this node's lease owner id

	mu      sync.Mutex
	skipped map[string]bool // undeliverable targets already logged
	observe func(store.WebhookDelivery)
	// unsigned warns, once, that webhooks go out without a signature:
	// only when there is a webhook to send, so a setup without webhooks
	// (anylift dev) stays quiet.
	unsigned sync.Once
	// scanned is the outbox Seq up to which this deliverer has read the
	// notifications after the stored cursor and found no webhook among
	// them; advanced is when it last moved the stored cursor up to it
	// (enqueue). Only the deliver loop (Step) touches them.
	scanned  int64
	advanced time.Time
}

// The deliverer reads before it writes. On a store whose writes go
// through one committer (SQLite, an owning node on PostgreSQL), each of
// its write transactions is a batch of the committer's, with its round
// trips and its commit, taken from the writes of the game: ran at every
// step, even with no webhook configured, the deliverer's enqueue and
// claim were 17 % of an owning node's committer time in a queue placement
// benchmark. So a step first reads, in read transactions, the
// notifications after the cursor and whether a delivery is due, and
// writes only for what the reads found: deliveries to add, deliveries to
// claim. Notifications without a webhook are passed over in memory
// (scanned); the stored cursor is moved up to them only now and then
// (cursorLag, cursorAge, and before each retention sweep, which keeps
// what is behind the cursor): a restart reads them again and finds, as
// before, nothing to deliver.
const (
	cursorLag = 1000            // notifications passed over before the cursor is written
	cursorAge = 2 * time.Second // or this long since it was last written
)

// isWebhook reports whether target is a URL this node can POST to.
func isWebhook(target string) bool {
	u, err := url.Parse(target)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// enqueue turns the notifications after the webhook cursor into pending
// deliveries; more reports a full page.
func (d *deliverer) enqueue(ctx context.Context) (more bool, err error) {
	now := d.now()
	var cur int64
	var page []*game.Notification
	err = d.st.View(ctx, func(tx store.Tx) error {
		var err error
		if cur, err = tx.WebhookCursor(); err != nil {
			return err
		}
		page, err = tx.ListNotifications(max(cur, d.scanned), pageSize)
		return err
	})
	if err != nil {
		return false, err
	}
	if len(page) == 0 {
		if d.scanned > cur && now.Sub(d.advanced) >= cursorAge {
			return false, d.settle(ctx)
		}
		return false, nil
	}
	var skip []string
	hooks := false
	for _, n := range page {
		switch {
		case isWebhook(n.Target):
			hooks = true
		case n.Target != "":
			skip = append(skip, n.Target)
		}
	}
	if !hooks {
		d.logSkipped(skip)
		d.scanned = page[len(page)-1].Seq
		more = len(page) == pageSize
		if d.scanned-cur < cursorLag && now.Sub(d.advanced) < cursorAge {
			return more, nil
		}
		return more, d.settle(ctx)
	}
	err = d.st.Update(ctx, func(tx store.Tx) error {
		skip = skip[:0]
		cur, err := tx.WebhookCursor()
		if err != nil {
			return err
		}
		// What this deliverer passed over after the cursor held no
		// webhook: the cursor moves over it with this page.
		page, err := tx.ListNotifications(max(cur, d.scanned), pageSize)
		if err != nil || len(page) == 0 {
			more = false
			return err
		}
		for _, n := range page {
			switch {
			case isWebhook(n.Target):
				err = tx.AddWebhookDelivery(&store.WebhookDelivery{Seq: n.Seq, Target: n.Target, NextAttempt: now})
			case n.Target != "":
				skip = append(skip, n.Target)
			}
			if err != nil {
				return err
			}
		}
		more = len(page) == pageSize
		ok, err := tx.AdvanceWebhookCursor(cur, page[len(page)-1].Seq)
		if err == nil && !ok {
			more = true // another node moved it: look again
		}
		return err
	})
	d.logSkipped(skip)
	return more, err
}

// settle moves the stored cursor up to what this deliverer has passed
// over (scanned), unless it stands there or beyond already.
func (d *deliverer) settle(ctx context.Context) error {
	if d.scanned == 0 {
		return nil
	}
	// Read first: a write transaction is the committer's (above).
	var cur int64
	if err := d.st.View(ctx, func(tx store.Tx) (err error) {
		cur, err = tx.WebhookCursor()
		return err
	}); err != nil || cur >= d.scanned {
		return err
	}
	err := d.st.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.WebhookCursor()
		if err != nil || cur >= d.scanned {
			return err
		}
		// Another node may have moved it meanwhile, to where this one
		// had not read yet: then it is left as it is.
		_, err = tx.AdvanceWebhookCursor(cur, d.scanned)
		return err
	})
	if err == nil {
		d.advanced = d.now()
	}
	return err
}

// logSkipped logs each target that is not a webhook once per node: SNS
// topics are for GameLift itself, not deliverable from here.
func (d *deliverer) logSkipped(targets []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range targets {
		if d.skipped[t] {
			continue
		}
		d.skipped[t] = true
		if strings.HasPrefix(t, "arn:") {
			d.log.Info("events: notification target is an SNS topic, which this service does not publish to; its events are on GET /events only", "target", t)
		} else {
			d.log.Warn("events: notification target is not an http(s) URL; its events are on GET /events only", "target", redact(t))
		}
	}
}

// claim leases the due deliveries to this node.
func (d *deliverer) claim(ctx context.Context) ([]*store.WebhookDelivery, error) {
	now := d.now()
	var due bool
	if err := d.st.View(ctx, func(tx store.Tx) (err error) {
		due, err = tx.WebhookDeliveriesDue(now)
		return err
	}); err != nil || !due {
		return nil, err
	}
	lease := now.Add(d.cfg.Timeout + 30*time.Second)
	var ds []*store.WebhookDelivery
	err := d.st.Update(ctx, func(tx store.Tx) (err error) {
		ds, err = tx.ClaimWebhookDeliveries(d.owner, now, lease, d.cfg.Concurrency)
		return err
	})
	return ds, err
}

// deliverAll attempts every claimed delivery, at most cfg.Concurrency at
// once, and waits for all of them.
func (d *deliverer) deliverAll(ctx context.Context, ds []*store.WebhookDelivery) {
	var wg sync.WaitGroup
	for _, dl := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.attempt(ctx, dl)
		}()
	}
	wg.Wait()
}

// attempt posts one delivery and records the outcome.
func (d *deliverer) attempt(ctx context.Context, dl *store.WebhookDelivery) {
	dl.Attempts++
	if dl.Notification == nil { // pruned under it: nothing left to send
		dl.State, dl.LastError = store.WebhookFailed, "notification no longer stored"
	} else if err := d.post(ctx, dl); err == nil {
		dl.State, dl.LastError = store.WebhookDelivered, ""
	} else if ctx.Err() != nil {
		return // shutting down: the lease runs out and the attempt is made again
	} else {
		dl.LastError = err.Error()
		dl.NextAttempt = d.now().Add(d.cfg.delay(dl.Attempts))
		if dl.Attempts >= d.cfg.MaxAttempts {
			dl.State = store.WebhookFailed
		}
	}
	var ok bool
	err := d.st.Update(context.WithoutCancel(ctx), func(tx store.Tx) (err error) {
		ok, err = tx.FinishWebhookAttempt(dl, d.owner)
		return err
	})
	if err == nil && ok && d.observe != nil {
		d.observe(*dl)
	}
	switch {
	case err != nil:
		d.log.Warn("events: recording a webhook attempt failed", "seq", dl.Seq, "err", err)
	case !ok:
		d.log.Warn("events: webhook lease ran out during the attempt; another attempt may follow", "seq", dl.Seq)
	case dl.State == store.WebhookFailed:
		d.log.Error("events: webhook delivery failed; giving up", "target", redact(dl.Target), "seq", dl.Seq,
			"attempts", dl.Attempts, "last_error", dl.LastError)
	case dl.State == store.WebhookPending:
		d.log.Info("events: webhook attempt failed; will retry", "target", redact(dl.Target), "seq", dl.Seq,
			"attempt", dl.Attempts, "next", dl.NextAttempt, "err", dl.LastError)
	}
}

// post sends one attempt; a 2xx answer is success.
func (d *deliverer) post(ctx context.Context, dl *store.WebhookDelivery) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	n := dl.Notification
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.Target, bytes.NewReader(n.Envelope))
	if err != nil {
		return fmt.Errorf("bad target: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "anylift-webhook")
	req.Header.Set(HeaderEventID, n.ID)
	req.Header.Set(HeaderEventType, n.Type)
	req.Header.Set(HeaderEventSeq, strconv.FormatInt(n.Seq, 10))
	req.Header.Set(HeaderAttempt, strconv.Itoa(dl.Attempts))
	if len(d.cfg.Secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(d.cfg.Secret, n.Envelope))
	} else {
		d.unsigned.Do(func() { d.log.Warn("events: no --webhook-secret: webhook requests are sent unsigned") })
	}
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL, which may hold secrets
		}
		return fmt.Errorf("request failed: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// redact drops a URL's user info and query, which may hold secrets.
func redact(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return "(unparsable target)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
