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
	// cursor is the stored cursor as this deliverer last read or wrote
	// it: never ahead of the stored one, which only moves forward.
	cursor int64

	// feed is what the stream's tailer has read of the outbox (fed).
	feed feed
	// wake wakes the deliver loop (Service.Wake's, for the deliverer
	// alone); nil when only Step drives it.
	wake func()

	// The claim's look for due deliveries (claim): claimEvery is how often
	// it looks in any case, checked when it last looked, recheck that it
	// should look at once, retries the next attempts this node scheduled.
	// Only the deliver loop touches checked and recheck; retries is under
	// mu (attempts record them).
	claimEvery time.Duration
	checked    time.Time
	recheck    bool
	retries    []time.Time
}

// feed is what the stream's tailer (Hub) has read of the outbox and
// handed to the deliverer: every notification in (from, to], and the
// seqs of those whose target is a webhook. The tailer reads every
// notification, in seq order, up to the same settled horizon, so a
// deliverer whose position is within that range need not read those
// notifications again to learn that none of them is a webhook's: a queue
// placement's notifications, without a webhook, were read twice, with
// the stored cursor read at each commit.
type feed struct {
	sync.Mutex
	started  bool
	from, to int64
	hooks    []int64
}

// maxFedHooks bounds the webhook seqs the feed keeps for a deliverer that
// does not keep up: past it, the feed starts again where the tailer is,
// and the deliverer reads from the store up to there, as without a feed.
const maxFedHooks = 1 << 16

// fed is the tailer's report of a page read after the position after (or
// of its start at after, with no page; or, with after -1, that it stopped
// reading). It wakes the deliver loop when the page holds a webhook's
// notification. The feed is followed only while the tailer reads: while
// no stream is open it reads nothing (Hub.step), and the deliverer reads
// the outbox itself.
func (d *deliverer) fed(after int64, page []*game.Notification) {
	hook := false
	var skip []string
	f := &d.feed
	f.Lock()
	if after < 0 {
		// The tailer idles: the deliverer reads for itself again.
		f.started, f.hooks = false, nil
		f.Unlock()
		return
	}
	if !f.started || after != f.to || len(f.hooks) > maxFedHooks {
		// The start, or (should the tailer ever skip) a range that does
		// not follow the last: the feed starts again here.
		f.started, f.from, f.to, f.hooks = true, after, after, nil
	}
	for _, n := range page {
		switch {
		case isWebhook(n.Target):
			f.hooks = append(f.hooks, n.Seq)
			hook = true
		case n.Target != "":
			skip = append(skip, n.Target)
		}
		f.to = n.Seq
	}
	f.Unlock()
	d.logSkipped(skip) // as enqueue would, having read them
	if hook && d.wake != nil {
		d.wake()
	}
}

// followed tells, for a deliverer that has dealt with every notification
// up to pos, how far the tailer has read (to) and the first webhook's
// notification after pos among what it read (hook, 0 if none); ok is
// false when the tailer has not read from pos or earlier.
func (d *deliverer) followed(pos int64) (to, hook int64, ok bool) {
	f := &d.feed
	f.Lock()
	defer f.Unlock()
	if !f.started || pos < f.from {
		return 0, 0, false
	}
	i := 0
	for i < len(f.hooks) && f.hooks[i] <= pos {
		i++
	}
	f.hooks = f.hooks[i:]
	if len(f.hooks) > 0 {
		hook = f.hooks[0]
	}
	return f.to, hook, true
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
//
// Where the tailer has read what follows the deliverer's position (fed),
// it reads nothing: without a webhook among those notifications it passes
// over them in memory, as it would having read them; with one, it passes
// over those before it and reads from there.
func (d *deliverer) enqueue(ctx context.Context) (more bool, err error) {
	now := d.now()
	if to, hook, ok := d.followed(max(d.cursor, d.scanned)); ok {
		if hook == 0 {
			d.scanned = max(d.scanned, to)
			if d.scanned > d.cursor && (d.scanned-d.cursor >= cursorLag || now.Sub(d.advanced) >= cursorAge) {
				return false, d.settle(ctx)
			}
			return false, nil
		}
		d.scanned = max(d.scanned, hook-1)
	}
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
	d.cursor = max(d.cursor, cur)
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
	var added int
	var moved int64
	err = d.st.Update(ctx, func(tx store.Tx) error {
		skip, added, moved = skip[:0], 0, 0
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
				added++
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
		if ok {
			moved = page[len(page)-1].Seq
		}
		return err
	})
	if err == nil {
		if moved > 0 {
			d.cursor, d.advanced = max(d.cursor, moved), now
		}
		if added > 0 {
			d.recheck = true // claim what was just added
		}
	}
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
		if err == nil {
			d.cursor = max(d.cursor, cur)
		}
		return err
	}
	var moved int64
	err := d.st.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.WebhookCursor()
		if err != nil || cur >= d.scanned {
			moved = cur
			return err
		}
		// Another node may have moved it meanwhile, to where this one
		// had not read yet: then it is left as it is.
		ok, err := tx.AdvanceWebhookCursor(cur, d.scanned)
		if ok {
			moved = d.scanned
		}
		return err
	})
	if err == nil {
		d.advanced = d.now()
		d.cursor = max(d.cursor, moved)
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
//
// It looks for them only when some may be due: deliveries this deliverer
// has just added, a claim that took as many as it could, an attempt this
// node scheduled coming due, and in any case every claimEvery (the poll
// interval), for what other nodes added or scheduled and leases that ran
// out. Not at every wake, which comes with every commit that appended.
func (d *deliverer) claim(ctx context.Context) ([]*store.WebhookDelivery, error) {
	now := d.now()
	if !d.claimDue(now) {
		return nil, nil
	}
	d.checked, d.recheck = now, false
	ds, err := d.claimNow(ctx, now)
	if err != nil || len(ds) >= d.cfg.Concurrency {
		d.recheck = true
	}
	return ds, err
}

// claimDue reports whether claim should look for due deliveries at now,
// and forgets the scheduled attempts due by then (the look finds them).
func (d *deliverer) claimDue(now time.Time) bool {
	due := d.recheck || d.checked.IsZero() || now.Sub(d.checked) >= d.claimEvery
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.retries[:0]
	for _, at := range d.retries {
		if at.After(now) {
			kept = append(kept, at)
		} else {
			due = true
		}
	}
	if due {
		d.retries = kept
	}
	return due
}

// claimNow leases the deliveries due at now to this node.
func (d *deliverer) claimNow(ctx context.Context, now time.Time) ([]*store.WebhookDelivery, error) {
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
	if err == nil && ok && dl.State == store.WebhookPending {
		d.mu.Lock()
		d.retries = append(d.retries, dl.NextAttempt)
		d.mu.Unlock()
	}
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
