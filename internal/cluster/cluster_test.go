package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/sdkwire"
)

var secret = []byte("a-shared-node-secret-for-tests")

// connected stands for the processes connected to the receiving node.
type connected struct {
	mu      sync.Mutex
	pushes  []sdkwire.Push
	gone    []string
	matches []flexmatch.FleetMatchCall
	// wakes counts Wake and WakePlacer calls.
	wakes, placerWakes int
}

func (c *connected) PushLocal(p processes.Ref, msg sdkwire.Push) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.PID != "here" {
		return false
	}
	c.pushes = append(c.pushes, msg)
	return true
}

func (c *connected) Wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wakes++
}

func (c *connected) WakePlacer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.placerWakes++
}

func (c *connected) RunFleetMatch(_ context.Context, call *flexmatch.FleetMatchCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.Config == "refused" {
		return errors.New("configuration refused")
	}
	c.matches = append(c.matches, *call)
	return nil
}

func (c *connected) DisconnectLocal(p processes.Ref, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = append(c.gone, p.PID+": "+reason)
	return p.PID == "here"
}

var quiet = slog.New(slog.DiscardHandler)

// receiver is a node's internal listener whose clock is now.
func receiver(t *testing.T, now func() time.Time) (*httptest.Server, *connected) {
	local := &connected{}
	srv := httptest.NewServer(Handler(NewVerifier(secret, 0, now), local, Relays{}, quiet))
	t.Cleanup(srv.Close)
	return srv, local
}

var here = processes.Ref{FleetID: "fleet-1", ComputeName: "c1", PID: "here"}

func TestForwardedPushIsDelivered(t *testing.T) {
	srv, local := receiver(t, nil)
	c := NewClient(secret, nil)
	ok, err := c.Push(context.Background(), srv.URL, here, &sdkwire.CreateGameSession{GameSessionId: "gs-1", Port: 7000})
	if err != nil || !ok {
		t.Fatalf("push: %v %v", ok, err)
	}
	if cg, _ := local.pushes[0].(*sdkwire.CreateGameSession); cg == nil || cg.GameSessionId != "gs-1" || cg.Port != 7000 {
		t.Errorf("delivered %#v", local.pushes[0])
	}
	ok, err = c.Push(context.Background(), srv.URL, processes.Ref{FleetID: "fleet-1", ComputeName: "c1", PID: "elsewhere"},
		&sdkwire.TerminateProcess{TerminationTime: 1})
	if err != nil || ok {
		t.Errorf("push to a process not connected there: %v %v", ok, err)
	}
	if ok, err := c.Disconnect(context.Background(), srv.URL, here, "ended"); err != nil || !ok {
		t.Errorf("disconnect: %v %v", ok, err)
	}
}

// Clocks that differ by a few seconds either way change nothing.
func TestSkewedClocksAreAccepted(t *testing.T) {
	for _, skew := range []time.Duration{-7 * time.Second, 7 * time.Second, -90 * time.Second} {
		srv, local := receiver(t, func() time.Time { return time.Now().Add(skew) })
		c := NewClient(secret, nil)
		if ok, err := c.Push(context.Background(), srv.URL, here, &sdkwire.TerminateProcess{TerminationTime: 1}); err != nil || !ok {
			t.Errorf("receiver clock %v off: %v %v", skew, ok, err)
		}
		if len(local.pushes) != 1 {
			t.Errorf("receiver clock %v off: %d pushes", skew, len(local.pushes))
		}
	}
}

// post sends body to the listener with the given headers.
func post(t *testing.T, url string, body []byte, h http.Header) int {
	req, _ := http.NewRequest(http.MethodPost, url+PushPath, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func signedHeaders(key []byte, at time.Time, body []byte) http.Header {
	req, _ := http.NewRequest(http.MethodPost, "http://x"+PushPath, nil)
	sign(req, key, at, body)
	return req.Header
}

func TestUnauthenticatedAndReplayedRequestsAreRefused(t *testing.T) {
	srv, local := receiver(t, nil)
	body := []byte(`{"FleetId":"fleet-1","ComputeName":"c1","PID":"here","Frame":{"Action":"TerminateProcess","StatusCode":200,"TerminationTime":1}}`)
	good := signedHeaders(secret, time.Now(), body)
	tampered := signedHeaders(secret, time.Now(), body)
	tampered.Set(HeaderNonce, "another-nonce")
	cases := []struct {
		name string
		h    http.Header
		body []byte
	}{
		{"unsigned", http.Header{}, body},
		{"wrong secret", signedHeaders([]byte("not-the-shared-secret!"), time.Now(), body), body},
		{"body changed", signedHeaders(secret, time.Now(), body), append([]byte(`{"PID":"x"}`), ' ')},
		{"nonce changed", tampered, body},
		{"ten minutes old", signedHeaders(secret, time.Now().Add(-10*time.Minute), body), body},
		{"ten minutes ahead", signedHeaders(secret, time.Now().Add(10*time.Minute), body), body},
		{"bad timestamp", http.Header{HeaderTime: {"soon"}, HeaderNonce: {"n"}, HeaderSignature: {"00"}}, body},
	}
	for _, c := range cases {
		if got := post(t, srv.URL, c.body, c.h); got != http.StatusUnauthorized {
			t.Errorf("%s: status %d", c.name, got)
		}
	}
	if len(local.pushes) != 0 {
		t.Fatalf("refused requests delivered %d pushes", len(local.pushes))
	}
	if got := post(t, srv.URL, body, good); got != http.StatusOK {
		t.Fatalf("signed request: %d", got)
	}
	if got := post(t, srv.URL, body, good); got != http.StatusUnauthorized {
		t.Errorf("replayed request: status %d", got)
	}
	if len(local.pushes) != 1 {
		t.Errorf("%d pushes delivered, want 1", len(local.pushes))
	}
}

// FuzzHandler: any signed body is answered 200 or 400, never a crash.
func FuzzHandler(f *testing.F) {
	f.Add([]byte(`{"FleetId":"f","ComputeName":"c","PID":"here","Frame":{"Action":"CreateGameSession","GameSessionId":"g"}}`))
	f.Add([]byte(`{"PID":"here","Frame":{"Action":"RefreshConnection","AuthToken":1}}`))
	f.Add([]byte(`{"PID":"here","Frame":"x"}`))
	f.Add([]byte(`[]`))
	h := Handler(NewVerifier(secret, 0, nil), &connected{}, Relays{}, quiet)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, PushPath, bytes.NewReader(body))
		sign(req, secret, time.Now(), body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Errorf("status %d for %q", rec.Code, body)
		}
	})
}

// stuckNode accepts connections and never answers.
func stuckNode(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// A node that accepts the connection and never answers holds a push for
// the client's timeout at most; the pushes that follow within that time
// are not tried at all, so a caller pushing to many of its processes is
// not held once per process. After the timeout it is tried again.
func TestStuckNodeHoldsAPushForTheTimeoutOnly(t *testing.T) {
	base := stuckNode(t)
	now := time.UnixMilli(1767225600000)
	c := newClient(secret, func() time.Time { return now }, 100*time.Millisecond)
	ctx := context.Background()
	ok, err := c.Push(ctx, base, here, &sdkwire.CreateGameSession{GameSessionId: "gs-1"})
	if ok || err == nil || errors.Is(err, ErrPeerDown) {
		t.Fatalf("first push to a stuck node: %v %v, want a timeout", ok, err)
	}
	for range 100 {
		if ok, err := c.Push(ctx, base, here, &sdkwire.CreateGameSession{GameSessionId: "gs-2"}); ok || !errors.Is(err, ErrPeerDown) {
			t.Fatalf("push right after: %v %v, want ErrPeerDown", ok, err)
		}
	}
	// Another node is not affected.
	srv, local := receiver(t, func() time.Time { return now })
	if ok, err := c.Push(ctx, srv.URL, here, &sdkwire.CreateGameSession{GameSessionId: "gs-3"}); !ok || err != nil || len(local.pushes) != 1 {
		t.Fatalf("push to a live node: %v %v", ok, err)
	}
	now = now.Add(100 * time.Millisecond)
	if _, err := c.Disconnect(ctx, base, here, "x"); err == nil || errors.Is(err, ErrPeerDown) {
		t.Fatalf("after the timeout the stuck node is tried again: %v", err)
	}
}

// A placement wakes the other node's placer only, not its reading of the
// leases; a node too old to know that wake is woken whole.
func TestWakePlacerWakesThePlacerOnly(t *testing.T) {
	srv, local := receiver(t, nil)
	c := NewClient(secret, nil)
	if err := c.WakePlacer(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := c.Wake(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	if local.placerWakes != 1 || local.wakes != 1 {
		t.Errorf("placer wakes %d, wakes %d; want 1 and 1", local.placerWakes, local.wakes)
	}

	old := &connected{}
	h := Handler(NewVerifier(secret, 0, nil), old, Relays{}, quiet)
	older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == WakePlacerPath {
			http.NotFound(w, r) // before the path existed
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(older.Close)
	if err := c.WakePlacer(context.Background(), older.URL); err != nil {
		t.Fatal(err)
	}
	if old.placerWakes != 0 || old.wakes != 1 {
		t.Errorf("older node: placer wakes %d, wakes %d; want 0 and 1", old.placerWakes, old.wakes)
	}
}
