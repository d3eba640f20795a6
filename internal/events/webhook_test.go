package events_test

import (
	"context"
	"crypto/hmac"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// hookRequest is one request a test webhook received.
type hookRequest struct {
	header http.Header
	body   []byte
	path   string
}

// hook is a real HTTP webhook receiver answering with status(n) to its
// n-th request (counting from 1).
type hook struct {
	*httptest.Server
	got chan hookRequest

	mu     sync.Mutex
	n      int
	status func(n int) int
}

func newHook(t *testing.T, status func(n int) int) *hook {
	h := &hook{got: make(chan hookRequest, 1000), status: status}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.n++
		code := h.status(h.n)
		h.mu.Unlock()
		h.got <- hookRequest{header: r.Header.Clone(), body: body, path: r.URL.RequestURI()}
		w.WriteHeader(code)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) setStatus(f func(int) int) {
	h.mu.Lock()
	h.status = f
	h.mu.Unlock()
}

func (h *hook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func always(code int) func(int) int { return func(int) int { return code } }

// The webhook receives the envelope, with the event headers and an
// HMAC-SHA256 signature it can verify; SNS and empty targets are not
// posted anywhere.
func TestWebhookSignedDelivery(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			h := newHook(t, always(204))
			cfg := baseConfig(backend)
			cfg.Events.Webhook.Secret = []byte("hook-secret")
			srv, stop := startServer(t, cfg)
			publish(t, srv, "PlacementFulfilled", "arn:q", "arn:aws:sns:us-west-2:123456789012:topic")
			publish(t, srv, "PlacementFulfilled", "arn:q", "")
			n := publish(t, srv, "PlacementFulfilled", "arn:q", h.URL+"/in?token=t")
			r := recv(t, h.got, "a webhook request")
			if string(r.body) != string(n.Envelope) || r.path != "/in?token=t" {
				t.Errorf("body %s path %s, want %s", r.body, r.path, n.Envelope)
			}
			want := map[string]string{
				"Content-Type": "application/json", events.HeaderEventID: n.ID, events.HeaderEventType: "PlacementFulfilled",
				events.HeaderEventSeq: strconv.FormatInt(n.Seq, 10), events.HeaderAttempt: "1",
			}
			for k, v := range want {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			sig := r.header.Get(events.HeaderSignature)
			if !hmac.Equal([]byte(sig), []byte(events.Sign([]byte("hook-secret"), r.body))) {
				t.Errorf("signature %q does not verify", sig)
			}
			stop()
			if c := h.count(); c != 1 {
				t.Errorf("%d requests, want 1", c)
			}
		})
	}
}

// A webhook answering 500 is retried after the backoff, by the clock the
// server is given; a restart in between resumes the delivery; a 2xx ends
// it.
func TestWebhookRetryAndResumeAfterRestart(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			h := newHook(t, always(500))
			clk := newClock()
			recorded := make(chan store.WebhookDelivery, 10)
			cfg := baseConfig(backend)
			cfg.Now = clk.Now
			cfg.Events.Poll = time.Hour // only commits and Wake drive it
			cfg.Events.Webhook.Backoff = 10 * time.Second
			cfg.Events.OnWebhookAttempt = func(d store.WebhookDelivery) { recorded <- d }
			srv, stop := startServer(t, cfg)
			n := publish(t, srv, "PlacementFailed", "arn:q", h.URL)
			if r := recv(t, h.got, "a webhook request"); r.header.Get(events.HeaderAttempt) != "1" {
				t.Fatalf("attempt header %q", r.header.Get(events.HeaderAttempt))
			}
			d := recv(t, recorded, "a recorded attempt")
			if d.State != store.WebhookPending || d.Attempts != 1 || !d.NextAttempt.Equal(clk.Now().Add(10*time.Second)) {
				t.Fatalf("after a 500: %+v", d)
			}
			clk.Add(10 * time.Second)
			srv.Events().Wake()
			recv(t, h.got, "a webhook request")
			if d = recv(t, recorded, "a recorded attempt"); d.Attempts != 2 || !d.NextAttempt.Equal(clk.Now().Add(20*time.Second)) {
				t.Fatalf("after a second 500: %+v", d)
			}
			stop()
			h.setStatus(always(200))
			clk.Add(20 * time.Second)
			srv, _ = startServer(t, cfg)
			r := recv(t, h.got, "a webhook request")
			if r.header.Get(events.HeaderAttempt) != "3" || r.header.Get(events.HeaderEventID) != n.ID {
				t.Fatalf("after restart: attempt %q id %q", r.header.Get(events.HeaderAttempt), r.header.Get(events.HeaderEventID))
			}
			if d = recv(t, recorded, "a recorded attempt"); d.State != store.WebhookDelivered || d.Attempts != 3 {
				t.Fatalf("after a 200: %+v", d)
			}
		})
	}
}

// openers returns, per backend, a function opening another handle on one
// shared database (as another node would).
func openers(t *testing.T) map[string]func() store.Store {
	out := map[string]func() store.Store{}
	for name, backend := range backends(t) {
		var cfg server.Config
		backend(&cfg)
		out[name] = func() store.Store {
			var st store.Store
			var err error
			if cfg.Store != "" {
				st, err = postgres.Open(context.Background(), cfg.Store)
			} else {
				st, err = sqlite.Open(context.Background(), cfg.DataDir, sqlite.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
	}
	return out
}

// Attempts are spaced by doubling backoff up to its cap and end after
// MaxAttempts; retention keeps an event while attempts remain.
func TestWebhookBackoffAndRetention(t *testing.T) {
	for name, open := range openers(t) {
		t.Run(name, func(t *testing.T) {
			st := open()
			h := newHook(t, always(500))
			clk := newClock()
			svc := events.New(st, events.Config{Now: clk.Now, Retention: time.Hour, Webhook: events.WebhookConfig{
				Backoff: time.Second, MaxBackoff: 3 * time.Second, MaxAttempts: 4}})
			ctx := context.Background()
			old := appendAt(t, st, clk.Now().Add(-2*time.Hour), h.URL)
			plain := appendAt(t, st, clk.Now().Add(-2*time.Hour), "")
			for i, wait := range []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second} {
				svc.Step(ctx)
				if c := h.count(); c != i+1 {
					t.Fatalf("after %v: %d requests, want %d", wait, c, i+1)
				}
				svc.Step(ctx) // not due again yet
				if c := h.count(); c != i+1 {
					t.Fatalf("retried before the backoff: %d requests", c)
				}
				if i == 0 {
					if kept := seqs(t, st); len(kept) != 1 || kept[0] != old.Seq {
						t.Fatalf("retention kept %v, want only the pending %d (not %d)", kept, old.Seq, plain.Seq)
					}
				}
				if i < 3 {
					clk.Add([]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}[i])
				}
			}
			var d *store.WebhookDelivery
			st.View(ctx, func(tx store.Tx) (err error) { d, err = tx.GetWebhookDelivery(old.Seq); return err })
			if d.State != store.WebhookFailed || d.Attempts != 4 || d.LastError != "HTTP 500" {
				t.Errorf("after the last attempt: %+v", d)
			}
			clk.Add(time.Hour)
			svc.Step(ctx)
			if c := h.count(); c != 4 {
				t.Errorf("%d requests after giving up, want 4", c)
			}
			if kept := seqs(t, st); len(kept) != 0 {
				t.Errorf("retention kept %v after the attempts ended", kept)
			}
		})
	}
}

func appendAt(t *testing.T, st store.Store, at time.Time, target string) *game.Notification {
	t.Helper()
	n := &game.Notification{ID: game.NewUUID(), Time: at, Type: "PlacementTimedOut", Resource: "arn:q", Target: target,
		Envelope: []byte(`{"detail":{"type":"PlacementTimedOut"}}`)}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.AppendNotification(n) }); err != nil {
		t.Fatal(err)
	}
	return n
}

func seqs(t *testing.T, st store.Store) []int64 {
	var out []int64
	err := st.View(context.Background(), func(tx store.Tx) error {
		list, err := tx.ListNotifications(0, 1000)
		for _, n := range list {
			out = append(out, n.Seq)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Two nodes delivering from one database post each event once.
func TestWebhookTwoDeliverersOneDatabase(t *testing.T) {
	for name, open := range openers(t) {
		t.Run(name, func(t *testing.T) {
			if name == "sqlite" {
				t.Skip("one server per SQLite data directory: only PostgreSQL has two deliverers on one database")
			}
			const total = 40
			h := newHook(t, always(200))
			recorded := make(chan store.WebhookDelivery, 2*total)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var nodes []*events.Service
			var stores []store.Store
			for range 2 {
				st := open()
				stores = append(stores, st)
				svc := events.New(st, events.Config{Poll: time.Millisecond,
					OnWebhookAttempt: func(d store.WebhookDelivery) { recorded <- d }})
				nodes = append(nodes, svc)
				wg.Add(1)
				go func() {
					defer wg.Done()
					svc.Run(ctx)
				}()
			}
			for i := range total {
				appendTo(t, stores[i%2], "PlacementFulfilled", "arn:q", h.URL)
				nodes[i%2].Wake()
			}
			for range total {
				if d := recv(t, recorded, "a recorded attempt"); d.State != store.WebhookDelivered {
					t.Errorf("recorded %+v", d)
				}
			}
			cancel()
			wg.Wait() // in-flight attempts finish before Run returns
			seen := map[string]int{}
			for len(h.got) > 0 {
				r := recv(t, h.got, "a webhook request")
				seen[r.header.Get(events.HeaderEventID)]++
			}
			for id, c := range seen {
				if c != 1 {
					t.Errorf("event %s posted %d times", id, c)
				}
			}
			if len(seen) != total {
				t.Errorf("%d events posted, want %d", len(seen), total)
			}
		})
	}
}

// BenchmarkWebhookDelivery measures webhook events delivered per second
// by one node (SQLite, a local receiver answering 204).
func BenchmarkWebhookDelivery(b *testing.B) {
	st, err := sqlite.Open(context.Background(), b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	defer recv.Close()
	done := make(chan struct{}, b.N)
	svc := events.New(st, events.Config{Webhook: events.WebhookConfig{Secret: []byte("s"), Concurrency: 32},
		OnWebhookAttempt: func(store.WebhookDelivery) { done <- struct{}{} }})
	env := []byte(`{"detail":{"type":"PlacementFulfilled"}}`)
	err = st.Update(context.Background(), func(tx store.Tx) error {
		for range b.N {
			n := &game.Notification{ID: game.NewUUID(), Time: time.Now(), Type: "PlacementFulfilled", Resource: "arn:q", Target: recv.URL, Envelope: env}
			if err := tx.AppendNotification(n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.ResetTimer()
	finished := make(chan struct{})
	go func() { defer close(finished); svc.Run(ctx) }()
	for range b.N {
		<-done
	}
	b.StopTimer()
	cancel()
	<-finished
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// recv receives from ch, failing the test if nothing comes within a
// minute: the bound only keeps a failure from hanging the package until
// its timeout.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("no %s within a minute", what)
		panic("unreachable")
	}
}
