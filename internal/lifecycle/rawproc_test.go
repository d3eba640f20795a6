package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// rawProc is a server process speaking raw SDK 5 frames, as the C++ and C#
// SDKs would: what it sends and receives is checked byte for byte.
type rawProc struct {
	t       *testing.T
	h       *harness
	compute string
	pid     string
	conn    *websocket.Conn
	answers chan map[string]any // frames with a RequestId
	pushes  chan map[string]any // frames without one
	closed  chan struct{}
}

// procQuery is the handshake query of a process, Go-style: sorted and
// percent-encoded.
func (h *harness) procQuery(compute, pid, token string) string {
	q := url.Values{"pID": {pid}, "ComputeId": {compute}, "FleetId": {h.fleet}, "Authorization": {token},
		"sdkVersion": {"5.4.0"}, "sdkLanguage": {"Cpp"}, "IdempotencyToken": {"idem-" + pid}}
	return q.Encode()
}

// dialQuery opens a process connection with a raw query string; it returns
// the HTTP status of a refused upgrade.
func (h *harness) dialQuery(path, rawQuery string) (*websocket.Conn, int, error) {
	u := strings.Replace(h.env.URL, "http://", "ws://", 1) + path + "?" + rawQuery
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, nil)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return c, status, err
}

// dial connects a raw process of compute with token.
func (h *harness) dial(compute, pid, token string) *rawProc {
	h.t.Helper()
	c, status, err := h.dialQuery("/", h.procQuery(compute, pid, token))
	if err != nil {
		h.t.Fatalf("dialing process %s: HTTP %d: %v", pid, status, err)
	}
	return h.attach(c, compute, pid)
}

func (h *harness) attach(c *websocket.Conn, compute, pid string) *rawProc {
	c.SetReadLimit(1 << 20)
	p := &rawProc{t: h.t, h: h, compute: compute, pid: pid, conn: c,
		answers: make(chan map[string]any, 64), pushes: make(chan map[string]any, 64), closed: make(chan struct{})}
	go p.read()
	h.t.Cleanup(func() { c.CloseNow() })
	return p
}

func (p *rawProc) read() {
	defer close(p.closed)
	for {
		_, b, err := p.conn.Read(context.Background())
		if err != nil {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			p.t.Errorf("process %s got a frame that is not JSON: %q", p.pid, b)
			continue
		}
		if id, _ := m["RequestId"].(string); id != "" {
			p.answers <- m
		} else {
			p.pushes <- m
		}
	}
}

// requestSeq numbers every request of the test binary, so no two
// connections ever send the same RequestId (the service answers a
// repeated id from its cache, as it does a retry).
var requestSeq atomic.Int64

// call sends a request and returns its answer.
func (p *rawProc) call(action string, fields map[string]any) map[string]any {
	p.t.Helper()
	id := fmt.Sprintf("req-%s-%d", p.pid, requestSeq.Add(1))
	return p.callID(id, action, fields)
}

// callID sends a request with RequestId id and returns its answer.
func (p *rawProc) callID(id, action string, fields map[string]any) map[string]any {
	p.t.Helper()
	m := map[string]any{"Action": action, "RequestId": id}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	if err := p.conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		p.t.Fatalf("process %s writing %s: %v", p.pid, action, err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a := <-p.answers:
			if a["RequestId"] != id {
				continue // the answer to an earlier call we gave up on
			}
			if a["Action"] != action {
				p.t.Fatalf("answer to %s echoes Action %v", action, a["Action"])
			}
			return a
		case <-timeout:
			p.t.Fatalf("process %s: no answer to %s", p.pid, action)
		}
	}
}

// ok sends a request and fails unless it succeeds.
func (p *rawProc) ok(action string, fields map[string]any) map[string]any {
	p.t.Helper()
	a := p.call(action, fields)
	if status(a) != 200 {
		p.t.Fatalf("process %s: %s answered %v", p.pid, action, a)
	}
	return a
}

// status is the StatusCode of an answer (0 when absent).
func status(a map[string]any) int {
	n, _ := a["StatusCode"].(json.Number)
	v, _ := n.Int64()
	return int(v)
}

// ready sends ActivateServerProcess with port and a first healthy heartbeat,
// as every SDK does on ProcessReady.
func (p *rawProc) ready(port int) {
	p.t.Helper()
	p.ok("ActivateServerProcess", map[string]any{"SdkVersion": "5.4.0", "SdkLanguage": "Cpp", "Port": port,
		"LogPaths": []string{"/var/log/game.log"}})
	p.heartbeat(true)
}

func (p *rawProc) heartbeat(healthy bool) map[string]any {
	p.t.Helper()
	return p.call("HeartbeatServerProcess", map[string]any{"HealthStatus": healthy})
}

// push waits for the next push, which must carry action.
func (p *rawProc) push(action string) map[string]any {
	p.t.Helper()
	select {
	case m := <-p.pushes:
		if m["Action"] != action {
			p.t.Fatalf("process %s: got push %v, want %s", p.pid, m, action)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatalf("process %s: no %s push", p.pid, action)
	}
	return nil
}

// noPush fails if a push came. It first makes a round trip: the endpoint
// writes frames in order, so a push queued earlier has arrived by then.
func (p *rawProc) noPush() {
	p.t.Helper()
	p.call("GetComputeCertificate", nil)
	select {
	case m := <-p.pushes:
		p.t.Fatalf("process %s: unexpected push %v", p.pid, m)
	default:
	}
}

// waitClosed waits until the service closes the connection.
func (p *rawProc) waitClosed() {
	p.t.Helper()
	select {
	case <-p.closed:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("process %s: connection not closed", p.pid)
	}
}

// drop closes the connection without ProcessEnding, as a crash would.
func (p *rawProc) drop() {
	p.conn.CloseNow()
	<-p.closed
}
