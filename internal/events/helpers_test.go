package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/storetestenv"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.UnixMilli(1767225600000).UTC()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// backends lists the store settings to run a test on: SQLite in a fresh
// directory always, a fresh PostgreSQL schema when configured.
func backends(t *testing.T) map[string]func(*server.Config) {
	out := map[string]func(*server.Config){"sqlite": func(c *server.Config) { c.DataDir = t.TempDir() }}
	if dsn := storetestenv.PostgresDSN(t); dsn != "" {
		out["postgres"] = func(c *server.Config) { c.Store = storetestenv.FreshSchema(t, dsn) }
	}
	return out
}

// baseConfig is a server on 127.0.0.1:0 with the test credentials.
func baseConfig(backend func(*server.Config)) server.Config {
	cfg := server.Config{
		Listen:      "127.0.0.1:0",
		TLSListen:   "",
		Region:      apitest.Region,
		AccountID:   "123456789012",
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey},
	}
	backend(&cfg)
	return cfg
}

// startServer starts the real server; stop closes it (also at cleanup).
func startServer(t *testing.T, cfg server.Config) (srv *server.Server, stop func()) {
	t.Helper()
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("starting server: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Close(ctx); err != nil {
				t.Errorf("closing server: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// publish appends a notification the way the application does: in a
// committed store transaction, through the store the server's
// application writes to (so the server is woken).
func publish(t *testing.T, srv *server.Server, typ, resource, target string) *game.Notification {
	t.Helper()
	return appendTo(t, events.Notifying(srv.Store(), srv.Events().Wake), typ, resource, target)
}

func appendTo(t *testing.T, st store.Store, typ, resource, target string) *game.Notification {
	t.Helper()
	id := game.NewUUID()
	env, _ := json.Marshal(map[string]any{
		"version": "0", "id": id, "detail-type": "GameLift Queue Placement Event", "source": "aws.gamelift",
		"account": "123456789012", "time": "2026-01-01T00:00:00.000Z", "region": "us-west-2",
		"resources": []string{resource}, "detail": map[string]any{"type": typ, "placementId": "p-" + id},
	})
	n := &game.Notification{ID: id, Time: time.Now().UTC(), Type: typ, Resource: resource, Target: target, Envelope: env}
	if err := st.Update(context.Background(), func(tx store.Tx) error { return tx.AppendNotification(n) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// frame is one SSE event or comment.
type frame struct {
	id, event, data, comment string
}

// sseClient reads a stream.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// connect opens GET /events?query with Basic credentials and the given
// Last-Event-ID, and reads up to the "connected" comment.
func connect(t *testing.T, srv *server.Server, query, lastID string) *sseClient {
	t.Helper()
	// The deadline is a safety net against a hung test, not a wait.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/events"+query, nil)
	req.SetBasicAuth(apitest.AccessKey, apitest.SecretKey)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("GET /events%s: %d %s", query, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(c.close)
	if f := c.next(); f.comment != "connected" {
		t.Fatalf("first frame %+v, want the connected comment", f)
	}
	return c
}

func (c *sseClient) close() {
	c.cancel()
	c.resp.Body.Close()
}

// next reads one frame.
func (c *sseClient) next() frame {
	c.t.Helper()
	var f frame
	var data []string
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading the stream: %v (partial %+v)", err, f)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			f.data = strings.Join(data, "\n")
			return f
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "":
			f.comment = v
		case "id":
			f.id = v
		case "event":
			f.event = v
		case "data":
			data = append(data, v)
		}
	}
}

// nextEvent reads frames up to the next event, skipping heartbeats.
func (c *sseClient) nextEvent() frame {
	c.t.Helper()
	for {
		if f := c.next(); f.comment == "" {
			return f
		} else if strings.HasPrefix(f.comment, "dropped") {
			c.t.Fatalf("dropped: %s", f.comment)
		}
	}
}

// expect reads the next event and checks it is n.
func (c *sseClient) expect(n *game.Notification) frame {
	c.t.Helper()
	f := c.nextEvent()
	if f.id != fmt.Sprint(n.Seq) || f.event != n.Type || f.data != string(n.Envelope) {
		c.t.Fatalf("event %+v, want id %d event %s data %s", f, n.Seq, n.Type, n.Envelope)
	}
	return f
}
