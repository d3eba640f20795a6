package events_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

// Live events arrive in order; a consumer that reconnects with the last
// id it saw, to a restarted server on the same store, misses nothing and
// sees nothing twice.
func TestStreamLiveAndResumeAcrossRestart(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := baseConfig(backend)
			srv, stop := startServer(t, cfg)
			c := connect(t, srv, "", "")
			var sent []*game.Notification
			for i := range 3 {
				sent = append(sent, publish(t, srv, "PlacementFulfilled", fmt.Sprint("arn:q/", i), ""))
			}
			c.expect(sent[0])
			last := c.expect(sent[1]).id
			c.close()
			// Published while the consumer is away, some before the restart.
			sent = append(sent, publish(t, srv, "PlacementTimedOut", "arn:q/3", ""))
			stop()
			srv, _ = startServer(t, cfg)
			sent = append(sent, publish(t, srv, "PlacementCancelled", "arn:q/4", ""))
			c = connect(t, srv, "", last)
			for _, n := range sent[2:] {
				c.expect(n)
			}
			live := publish(t, srv, "PlacementFailed", "arn:q/5", "")
			c.expect(live)
		})
	}
}

// ?after= replays like Last-Event-ID; the type and resource filters pass
// only what they name.
func TestStreamFilters(t *testing.T) {
	srv, _ := startServer(t, baseConfig(backends(t)["sqlite"]))
	var want []*game.Notification
	for _, typ := range []string{"PlacementFulfilled", "PlacementFailed", "MatchmakingSucceeded", "PlacementFulfilled"} {
		for _, res := range []string{"arn:a", "arn:b"} {
			n := publish(t, srv, typ, res, "")
			if (typ == "PlacementFulfilled" || typ == "MatchmakingSucceeded") && res == "arn:b" {
				want = append(want, n)
			}
		}
	}
	c := connect(t, srv, "?after=0&type=PlacementFulfilled,MatchmakingSucceeded&resource=arn:b", "")
	for _, n := range want {
		c.expect(n)
	}
	// Live events are filtered the same way.
	publish(t, srv, "PlacementFulfilled", "arn:a", "")
	publish(t, srv, "PlacementFailed", "arn:b", "")
	last := c.expect(publish(t, srv, "MatchmakingSucceeded", "arn:b", ""))
	// The header wins over the parameter.
	h := connect(t, srv, "?after=0&resource=arn:b", last.id)
	h.expect(publish(t, srv, "PlacementFailed", "arn:b", ""))
}

// Without credentials, or with wrong ones, the stream is refused; Basic
// and SigV4 with the API's credentials are accepted; bad parameters are
// a 400 with a message.
func TestStreamAuth(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "no-events.json"), []byte(`{"Statement": {"Effect": "Allow", "Action": "gamelift:*", "NotResource": "*"}}`), 0o600)
	os.WriteFile(filepath.Join(dir, "events.json"), []byte(`{"Statement": {"Effect": "Allow", "Action": "gamelift:DescribeFleetEvents", "Resource": "*"}}`), 0o600)
	os.WriteFile(filepath.Join(dir, "credentials"), []byte("AKIDNOEVENTS secret-no no-events.json\nAKIDEVENTS secret-yes events.json\n"), 0o600)
	cfg := baseConfig(backends(t)["sqlite"])
	cfg.CredentialsFile = filepath.Join(dir, "credentials")
	srv, _ := startServer(t, cfg)
	get := func(prep func(*http.Request), query string) (int, string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/events"+query, nil)
		prep(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		return resp.StatusCode, ""
	}
	cases := []struct {
		name  string
		prep  func(*http.Request)
		query string
		want  int
	}{
		{"none", func(*http.Request) {}, "", 401},
		{"wrong secret", func(r *http.Request) { r.SetBasicAuth(apitest.AccessKey, "nope") }, "", 401},
		{"unknown key", func(r *http.Request) { r.SetBasicAuth("AKIDOTHER", apitest.SecretKey) }, "", 401},
		{"basic", func(r *http.Request) { r.SetBasicAuth(apitest.AccessKey, apitest.SecretKey) }, "", 200},
		{"sigv4", func(r *http.Request) { apitest.Sign(t, r, apitest.AccessKey, apitest.SecretKey, time.Now()) }, "?after=0", 200},
		{"sigv4 wrong secret", func(r *http.Request) { apitest.Sign(t, r, apitest.AccessKey, "nope", time.Now()) }, "", 401},
		// A key limited by a policy needs DescribeFleetEvents on *.
		{"policy without events", func(r *http.Request) { r.SetBasicAuth("AKIDNOEVENTS", "secret-no") }, "", 403},
		{"sigv4 policy without events", func(r *http.Request) { apitest.Sign(t, r, "AKIDNOEVENTS", "secret-no", time.Now()) }, "", 403},
		{"policy with events", func(r *http.Request) { r.SetBasicAuth("AKIDEVENTS", "secret-yes") }, "", 200},
		{"bad id", func(r *http.Request) { r.SetBasicAuth(apitest.AccessKey, apitest.SecretKey) }, "?after=-1", 400},
		{"unknown parameter", func(r *http.Request) { r.SetBasicAuth(apitest.AccessKey, apitest.SecretKey) }, "?typo=1", 400},
		{"bad type", func(r *http.Request) { r.SetBasicAuth(apitest.AccessKey, apitest.SecretKey) }, "?type=a%0Ab", 400},
	}
	for _, tc := range cases {
		code, body := get(tc.prep, tc.query)
		if code != tc.want {
			t.Errorf("%s: %d %q, want %d", tc.name, code, body, tc.want)
		}
		if code == 401 && strings.Contains(body, apitest.SecretKey) {
			t.Errorf("%s: secret echoed", tc.name)
		}
	}

	// Development mode opens it.
	cfg = baseConfig(backends(t)["sqlite"])
	cfg.Credentials, cfg.AnyCredentials = nil, true
	open, _ := startServer(t, cfg)
	resp, err := http.Get(open.URL() + "/events?after=0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("insecure mode: %d", resp.StatusCode)
	}
}

// Idle streams carry heartbeat comments.
func TestStreamHeartbeat(t *testing.T) {
	cfg := baseConfig(backends(t)["sqlite"])
	cfg.Events.Heartbeat = time.Millisecond
	srv, _ := startServer(t, cfg)
	c := connect(t, srv, "", "")
	if f := c.next(); f.comment != "keepalive" {
		t.Errorf("frame %+v, want a keepalive comment", f)
	}
}

// Closing the server ends open streams instead of waiting for them.
func TestStreamEndsOnShutdown(t *testing.T) {
	srv, stop := startServer(t, baseConfig(backends(t)["sqlite"]))
	c := connect(t, srv, "", "")
	stop() // would block until its deadline if the stream held it open
	if _, err := c.r.ReadString('\n'); err != io.EOF {
		t.Errorf("stream after shutdown: %v, want EOF", err)
	}
}

// BenchmarkStreamRoundTrip measures from the commit of an event to its
// arrival at a stream consumer, on one node with SQLite.
func BenchmarkStreamRoundTrip(b *testing.B) {
	cfg := baseConfig(func(c *server.Config) { c.DataDir = b.TempDir() })
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/events", nil)
	req.SetBasicAuth(apitest.AccessKey, apitest.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	r.ReadString('\n') // ": connected"
	r.ReadString('\n')
	st := events.Notifying(srv.Store(), srv.Events().Wake)
	env := []byte(`{"detail":{"type":"PlacementFulfilled"}}`)
	b.ResetTimer()
	for i := range b.N {
		n := &game.Notification{ID: fmt.Sprint("bench-", i), Time: time.Now(), Type: "PlacementFulfilled", Resource: "arn:q", Envelope: env}
		if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.AppendNotification(n) }); err != nil {
			b.Fatal(err)
		}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\n" {
				break
			}
		}
	}
}
