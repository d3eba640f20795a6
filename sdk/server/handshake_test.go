package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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
