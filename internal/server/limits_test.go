package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/server"
)

// waitLimit is how long a test waits for the server to act before it
// calls the server stuck. It is a safety net, never the thing measured:
// every limit under test is far shorter.
const waitLimit = 20 * time.Second

func startLimited(t *testing.T, l server.Limits, opts ...apitest.Option) *apitest.Env {
	t.Helper()
	return apitest.Start(t, append([]apitest.Option{func(c *server.Config) { c.Limits = l }}, opts...)...)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed reads c until the server closes it; it fails the test if
// the server keeps it open past waitLimit. It returns what was read.
func waitClosed(t *testing.T, c net.Conn, what string) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitLimit))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server kept the connection open", what)
	}
	return got
}

// signedHead is a signed ListFleets request whose body is body: its head
// (request line and headers) as it goes on the wire.
func signedHead(t *testing.T, env *apitest.Env, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.URL+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "GameLift.ListFleets")
	apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(buf.Bytes(), []byte("\r\n\r\n"))
	return append(head, "\r\n\r\n"...)
}

// describeWorks makes a normal signed call on a new connection.
func describeWorks(t *testing.T, env *apitest.Env, what string) {
	t.Helper()
	req := env.NewJSONRequest(t, "ListFleets", map[string]any{})
	req.Close = true
	apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
	if r := env.Do(t, req); r.Status != http.StatusOK {
		t.Fatalf("%s: a normal call answered %d %s", what, r.Status, r.Body)
	}
}

// Headers then one body byte, then nothing: the whole-request read
// timeout ends the connection; a client stalling its headers is cut by
// the header timeout. Other clients are served meanwhile.
func TestStalledRequestsAreCut(t *testing.T) {
	env := startLimited(t, server.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond})
	addr := env.Server.Addr()

	body := bytes.Repeat([]byte(" "), 1000)
	slowBody := dial(t, addr)
	if _, err := slowBody.Write(append(signedHead(t, env, body), body[0])); err != nil {
		t.Fatal(err)
	}
	slowHeaders := dial(t, addr)
	if _, err := slowHeaders.Write([]byte("POST / HTTP/1.1\r\nHost: " + addr + "\r\nX-Amz-Target: GameLift.ListFleets\r\n")); err != nil {
		t.Fatal(err)
	}
	silent := dial(t, addr)

	describeWorks(t, env, "while three connections stall")
	waitClosed(t, slowHeaders, "headers stalled")
	waitClosed(t, silent, "nothing sent")
	got := waitClosed(t, slowBody, "body stalled")
	if len(got) > 0 && !bytes.Contains(got, []byte("InvalidRequestException")) {
		t.Errorf("stalled body answered %q", got)
	}
	if st := env.Server.ListenerStats("API"); st.Open > 1 { // the keep-alive of describeWorks at most
		t.Errorf("after the stalls: %+v", st)
	}
}

// A keep-alive connection is closed after the idle timeout.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	env := startLimited(t, server.Limits{IdleTimeout: 300 * time.Millisecond})
	c := dial(t, env.Server.Addr())
	body := []byte(`{}`)
	c.Write(append(signedHead(t, env, body), body...))
	c.SetReadDeadline(time.Now().Add(waitLimit))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("data after the answer")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the idle keep-alive connection stayed open")
	}
}

// At the connection cap, a new connection closes the one idle longest,
// so connections that send nothing cannot keep others out; with every
// connection busy, the new one is refused at once.
func TestConnectionCapEvictsTheIdlest(t *testing.T) {
	const max = 4
	env := startLimited(t, server.Limits{MaxConns: max})
	addr := env.Server.Addr()
	var idle []net.Conn
	for range 5 * max {
		idle = append(idle, dial(t, addr))
	}
	describeWorks(t, env, "after many idle connections")
	waitClosed(t, idle[0], "the oldest idle connection")
	st := env.Server.ListenerStats("API")
	if st.Open > max || st.Evicted < 4*max {
		t.Errorf("stats %+v: want at most %d open and %d evicted", st, max, 4*max)
	}

	// On a fresh server, four requests in progress (bodies stalled) fill
	// the listener. Each asks for 100 Continue, which the server sends
	// once its handler reads the body: then the request is surely in
	// progress, not idle. A fifth connection is refused.
	env = startLimited(t, server.Limits{MaxConns: max})
	addr = env.Server.Addr()
	body := bytes.Repeat([]byte(" "), 100)
	for range max {
		c := dial(t, addr)
		head := signedHead(t, env, body)
		head = append(head[:len(head)-2], "Expect: 100-continue\r\n\r\n"...)
		c.Write(head)
		c.SetReadDeadline(time.Now().Add(waitLimit))
		line, err := bufio.NewReader(c).ReadString('\n')
		if !strings.HasPrefix(line, "HTTP/1.1 100") {
			t.Fatalf("no 100 Continue: %q %v", line, err)
		}
		c.Write(body[:1])
	}
	refused := dial(t, addr)
	waitClosed(t, refused, "a connection beyond the cap with every connection busy")
	if st := env.Server.ListenerStats("API"); st.Refused != 1 || st.Evicted != 0 || st.Open != max {
		t.Errorf("stats %+v: want %d open and one refusal", st, max)
	}
}

// A WebSocket connection on the shared listener outlives every HTTP
// deadline and is not counted against the cap: a healthy process that
// is quiet for longer than the timeouts stays connected.
func TestWebSocketOutlivesHTTPLimits(t *testing.T) {
	for name, client := range map[string]*http.Client{"plain": nil, "tls": apitest.NewTLSOnly().Client} {
		t.Run(name, func(t *testing.T) { webSocketOutlivesHTTPLimits(t, client) })
	}
}

// webSocketOutlivesHTTPLimits runs the test with client: plain, or TLS on
// the same port as the C++ SDK connects.
func webSocketOutlivesHTTPLimits(t *testing.T, client *http.Client) {
	const short = time.Second
	env := startLimited(t, server.Limits{ReadHeaderTimeout: short, ReadTimeout: short, WriteTimeout: 2 * short, IdleTimeout: short, MaxConns: 2})
	gl := env.Client()
	fleet := apitest.AnywhereFleet(t, gl, "custom-limits", "limits")
	token := apitest.RegisterCompute(t, gl, fleet, "custom-limits", "host-1", "127.0.0.1")

	q := url.Values{"pID": {"p1"}, "ComputeId": {"host-1"}, "FleetId": {fleet}, "Authorization": {token},
		"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "IdempotencyToken": {"idem-1"}}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, env.Server.SDKEndpoint()+"/?"+q.Encode(), &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("upgrade: %v (%v)", err, resp)
	}
	defer ws.CloseNow()
	exchange := func(frame string) {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no answer to %s: %v", frame, err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		if m["StatusCode"] != float64(200) {
			t.Fatalf("%s answered %s", frame, b)
		}
	}
	exchange(`{"Action":"ActivateServerProcess","RequestId":"r1","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":[]}`)

	// A stalled request opened after the upgrade is cut: by then more
	// than every HTTP deadline has passed for the upgraded connection.
	body := bytes.Repeat([]byte(" "), 100)
	slow := dial(t, env.Server.Addr())
	slow.Write(append(signedHead(t, env, body), body[0]))
	waitClosed(t, slow, "stalled body")
	// Fill the listener with idle connections, and more: the process's
	// connection is never the one evicted.
	var idle []net.Conn
	for range 4 {
		idle = append(idle, dial(t, env.Server.Addr()))
	}
	waitClosed(t, idle[0], "the oldest idle connection")
	exchange(`{"Action":"HeartbeatServerProcess","RequestId":"r2","HealthStatus":true}`)
	if st := env.Server.ListenerStats("API"); st.Upgraded != 1 || st.Open > 2 {
		t.Errorf("stats %+v: want 1 upgraded, at most 2 open", st)
	}
}

// The node listener, the player gateway and the TLS listener are bounded
// alike: past the cap and with stalled headers, connections are closed.
func TestEveryListenerIsBounded(t *testing.T) {
	env := startLimited(t, server.Limits{ReadHeaderTimeout: 2 * time.Second, MaxConns: 2}, func(c *server.Config) {
		c.NodeListen, c.NodeSecret = "127.0.0.1:0", "a-node-secret-of-some-length"
		c.PlayerListen = "127.0.0.1:0"
		c.Player.Auth.DevMode = true
		c.TLSListen = "127.0.0.1:0"
	})
	for name, addr := range map[string]string{"node": env.Server.NodeAddr(), "player gateway": env.Server.PlayerAddr(), "TLS": env.Server.TLSAddr()} {
		t.Run(name, func(t *testing.T) {
			var conns []net.Conn
			for range 3 {
				conns = append(conns, dial(t, addr))
			}
			waitClosed(t, conns[0], "beyond the cap")
			conns[1].Write([]byte("GET / HTTP/1.1\r\n"))
			waitClosed(t, conns[1], "headers stalled")
		})
	}
}

// The node listener refuses an unsigned push from its headers, without
// waiting for its body.
func TestNodeListenerRefusesBeforeTheBody(t *testing.T) {
	env := startLimited(t, server.Limits{}, func(c *server.Config) {
		c.NodeListen, c.NodeSecret = "127.0.0.1:0", "a-node-secret-of-some-length"
	})
	c := dial(t, env.Server.NodeAddr())
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: node\r\nContent-Length: 1000000\r\n\r\n", cluster.PushPath)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d", resp.StatusCode)
	}
}
