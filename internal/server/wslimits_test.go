package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
)

// processDialer opens process connections to env's endpoint for one
// compute.
type processDialer struct {
	env          *apitest.Env
	fleet, token string
}

func newProcessDialer(t *testing.T, env *apitest.Env) *processDialer {
	gl := env.Client()
	fleet := apitest.AnywhereFleet(t, gl, "custom-wslimits", "wslimits")
	token := apitest.RegisterCompute(t, gl, fleet, "custom-wslimits", "host-1", "127.0.0.1")
	return &processDialer{env: env, fleet: fleet, token: token}
}

// dial opens the connection of process pid with token, and reports the
// connection or the status of the refusal.
func (d *processDialer) dial(ctx context.Context, pid, token string) (*websocket.Conn, *http.Response, error) {
	q := url.Values{"pID": {pid}, "ComputeId": {"host-1"}, "FleetId": {d.fleet}, "Authorization": {token},
		"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "IdempotencyToken": {"idem-" + pid}}
	return websocket.Dial(ctx, d.env.Server.SDKEndpoint()+"/?"+q.Encode(), nil)
}

// heartbeat sends a heartbeat on ws and checks its answer.
func heartbeat(t *testing.T, ctx context.Context, ws *websocket.Conn, id string) {
	t.Helper()
	frame := fmt.Sprintf(`{"Action":"HeartbeatServerProcess","RequestId":%q,"HealthStatus":true}`, id)
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	_, b, err := ws.Read(ctx)
	if err != nil {
		t.Fatalf("no answer to %s: %v", id, err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["StatusCode"] != float64(200) {
		t.Fatalf("%s answered %s", id, b)
	}
}

// At the WebSocket cap, the next upgrade is answered 503 with Retry-After
// before the upgrade, and the connections already upgraded go on. A
// handshake refused for its token holds no slot and stays an HTTP
// connection. Refusals are counted in /metrics and logged once a period
// (a minute of the test's clock), with their count.
func TestWebSocketCapRefusesWith503(t *testing.T) {
	clock := &testclock.Offset{}
	logs := &lockedBuffer{}
	env := startLimited(t, server.Limits{MaxWebSockets: 2}, func(c *server.Config) {
		c.Now = clock.Now
		c.Log = slog.New(slog.NewTextHandler(logs, nil))
	})
	d := newProcessDialer(t, env)
	ctx := waitCtx(t)

	first, resp, err := d.dial(ctx, "p1", d.token)
	if err != nil {
		t.Fatalf("first upgrade: %v (%v)", err, resp)
	}
	defer first.CloseNow()
	if _, resp, err := d.dial(ctx, "p-bad", "not-the-token"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a bad token: %v (%v)", err, resp)
	}
	second, resp, err := d.dial(ctx, "p2", d.token)
	if err != nil {
		t.Fatalf("second upgrade, after a refused handshake: %v (%v)", err, resp)
	}
	defer second.CloseNow()

	refuse := func() {
		t.Helper()
		_, resp, err := d.dial(ctx, "p3", d.token)
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("an upgrade beyond the cap: %v (%+v)", err, resp)
		}
	}
	for range 3 {
		refuse()
	}
	heartbeat(t, ctx, first, "r1")
	heartbeat(t, ctx, second, "r2")
	if st := env.Server.ListenerStats("API"); st.Upgraded != 2 || st.RefusedWebSockets != 3 {
		t.Errorf("stats %+v: want 2 upgraded and 3 refused", st)
	}
	if got := logs.lines("WebSocket cap reached"); len(got) != 1 || !strings.Contains(got[0], "refused=1") {
		t.Errorf("logged %q, want one line for the first refusal", got)
	}
	clock.Advance(time.Minute)
	refuse()
	if got := logs.lines("WebSocket cap reached"); len(got) != 2 || !strings.Contains(got[1], "refused=3") {
		t.Errorf("logged %q, want a second line, a minute later, counting 3", got)
	}
	want := `anylift_listener_refused_connections_total{listener="API",reason="websocket_cap"} 4`
	if m := scrape(t, env); !strings.Contains(m, want) || !strings.Contains(m, `anylift_listener_connections{kind="websocket",listener="API"} 2`) {
		t.Errorf("/metrics lacks %s and the open WebSockets:\n%s", want, grepLines(m, "anylift_listener_"))
	}
}

// scrape reads env's /metrics.
func scrape(t *testing.T, env *apitest.Env) string {
	t.Helper()
	resp, err := http.Get(env.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grepLines(s, prefix string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the lines logged so far that contain s.
func (b *lockedBuffer) lines(s string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for line := range strings.Lines(b.buf.String()) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// waitCtx is a context for the test's exchanges with the server.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}
