package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/anylift/anylift/sdk/server"
)

// The handshake carries GameLift's query members; a refused handshake is
// retried with the same IdempotencyToken, then Init fails.
func TestHandshakeQueryAndRetries(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		http.Error(w, "Forbidden", http.StatusForbidden)
	}))
	defer hs.Close()
	opts := fast()
	opts.ConnectAttempts = 2
	_, err := server.Init(server.ServerParameters{WebSocketURL: "ws" + hs.URL[len("http"):] + "?dropped=1", ProcessID: "proc-1",
		HostID: "compute-1", FleetID: "fleet-1", AuthToken: "tok+/=&x"}, opts)
	wantType(t, err, server.LocalConnectionFailed)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d attempts, want 2", len(seen))
	}
	q := seen[0].URL.Query()
	want := url.Values{"pID": {"proc-1"}, "sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "ComputeId": {"compute-1"},
		"FleetId": {"fleet-1"}, "Authorization": {"tok+/=&x"}, "IdempotencyToken": q["IdempotencyToken"]}
	if seen[0].URL.Path != "/" || q.Encode() != want.Encode() || len(q.Get("IdempotencyToken")) != 36 {
		t.Errorf("handshake %s", seen[0].URL)
	}
	if seen[1].URL.RawQuery != seen[0].URL.RawQuery {
		t.Errorf("retry changed the query: %s", seen[1].URL.RawQuery)
	}
}

// Init's error says who must act on a refused handshake: the process for
// a refused token, the service (in its own words) for anything else,
// such as the 500 of a fleet moving between nodes. The token is never
// quoted.
func TestRefusedHandshakeSaysWhy(t *testing.T) {
	for _, c := range []struct {
		status      int
		body, want  string
		credentials bool
	}{
		{http.StatusForbidden, "Forbidden", "403 Forbidden: the process id must be unique", true},
		{http.StatusInternalServerError, "this node does not own the process's fleet; retry (tok-secret)",
			"500 Internal Server Error: the service did not take the connection (this node does not own the process's fleet; retry", false},
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, c.body, c.status)
		}))
		opts := fast()
		opts.ConnectAttempts = 1
		_, err := server.Init(server.ServerParameters{WebSocketURL: "ws" + hs.URL[len("http"):], ProcessID: "proc-1",
			HostID: "compute-1", FleetID: "fleet-1", AuthToken: "tok-secret"}, opts)
		hs.Close()
		wantType(t, err, server.LocalConnectionFailed)
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "tok-secret") ||
			strings.Contains(msg, "unique") != c.credentials {
			t.Errorf("%d: %s", c.status, msg)
		}
	}
}
