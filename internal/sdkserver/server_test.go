package sdkserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
	"github.com/anylift/anylift/internal/sdkwire"
)

var procA = sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "proc-a"}
var procB = sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "proc-b"}

// endpoint is a Server over an in-memory Backend, driven through pipes.
type endpoint struct {
	b *sdktest.Backend
	s *sdkserver.Server
}

func newEndpoint(t *testing.T, cfg sdkserver.Config) *endpoint {
	b := sdktest.NewBackend()
	cfg.Auth, cfg.Backend = b, b
	s := sdkserver.New(cfg)
	t.Cleanup(func() { s.Close() })
	return &endpoint{b: b, s: s}
}

// client is the process's end of a pipe.
type client struct {
	t    *testing.T
	c    sdkserver.Conn
	done chan struct{} // closed when Serve returns
}

func (e *endpoint) connect(t *testing.T, p sdkserver.Process) *client {
	a, b := sdkserver.Pipe()
	cl := &client{t: t, c: b, done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		e.s.Serve(&sdkserver.Handshake{Process: p, AuthToken: "tok"}, a)
	}()
	e.b.Wait(t, "Connected")
	return cl
}

func (c *client) send(frame string) {
	c.t.Helper()
	if err := c.c.Write(context.Background(), []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next frame as a map.
func (c *client) read() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := c.c.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("%s: %v", b, err)
	}
	return m
}

// call sends frame and returns the answer.
func (c *client) call(frame string) map[string]any {
	c.t.Helper()
	c.send(frame)
	return c.read()
}

// closedWith waits for the connection to close and returns its close code.
func (c *client) closedWith() int {
	c.t.Helper()
	for {
		_, err := c.c.Read(context.Background())
		var ce *sdkserver.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			c.t.Fatal(err)
		}
	}
}

func wantAnswer(t *testing.T, got map[string]any, action, id string, status float64, msg string) {
	t.Helper()
	if got["Action"] != action || got["RequestId"] != id || got["StatusCode"] != status {
		t.Fatalf("answer %v, want %s %s %v", got, action, id, status)
	}
	if m, _ := got["ErrorMessage"].(string); !strings.Contains(m, msg) || (msg == "" && m != "") {
		t.Fatalf("answer %v, want ErrorMessage containing %q", got, msg)
	}
}

const activate = `{"Action":"ActivateServerProcess","RequestId":"r-act","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":null}`

func TestRequestsAreAnsweredWithActionRequestIdAndStatus(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	c := e.connect(t, procA)
	wantAnswer(t, c.call(activate), "ActivateServerProcess", "r-act", 200, "")
	wantAnswer(t, c.call(`{"Action":"HeartbeatServerProcess","RequestId":"r-hb","HealthStatus":false}`), "HeartbeatServerProcess", "r-hb", 200, "")
	if p, _ := e.b.Process(procA); !p.Active || p.Port != 7777 || p.Healthy || p.Heartbeats != 1 {
		t.Errorf("process %+v", p)
	}
	got := c.call(`{"Action":"DescribePlayerSessions","RequestId":"r-d","PlayerId":"nobody"}`)
	wantAnswer(t, got, "DescribePlayerSessions", "r-d", 200, "")
	if ps, ok := got["PlayerSessions"].([]any); !ok || len(ps) != 0 {
		t.Errorf("PlayerSessions must be an empty list: %v", got)
	}
	got = c.call(`{"Action":"GetFleetRoleCredentials","RequestId":"r-c","RoleArn":"arn:aws:iam::123456789012:role/r"}`)
	if got["AccessKeyId"] != "" || got["Expiration"] != float64(0) {
		t.Errorf("credentials %v", got)
	}
	wantAnswer(t, c.call(activate[:len(activate)-1]+`,"RequestId":"r-act2"}`), "ActivateServerProcess", "r-act2", 409, "already active")
}

func TestBadFramesGetAnErrorAnswerAndChangeNothing(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	c := e.connect(t, procA)
	cases := []struct{ frame, action, id, msg string }{
		{`{"Action":"ActivateServerProcess","RequestId":"r1","SdkVersion":"5","SdkLanguage":"Go","Port":"7777"}`, "ActivateServerProcess", "r1", "Port must be an integer"},
		{`{"Action":"Dance","RequestId":"r2"}`, "Dance", "r2", `unknown Action "Dance"`},
		{`{"Action":"AcceptPlayerSession","RequestId":"r3","GameSessionId":"g"}`, "AcceptPlayerSession", "r3", "PlayerSessionId is required"},
		{`{"Action":"CreateGameSession","RequestId":"r4"}`, "", "r4", "unknown Action"},
	}
	for _, k := range cases {
		got := c.call(k.frame)
		if k.action == "" {
			if _, ok := got["Action"]; ok {
				t.Errorf("error answer echoes a push Action: %v", got)
			}
			got["Action"] = ""
		}
		wantAnswer(t, got, k.action, k.id, 400, k.msg)
	}
	if _, ok := e.b.Process(procA); ok {
		t.Error("a refused frame reached the backend")
	}
	wantAnswer(t, c.call(activate), "ActivateServerProcess", "r-act", 200, "")
}

func TestGarbageClosesOnlyItsConnection(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	a := e.connect(t, procA)
	b := e.connect(t, procB)
	a.send(`this is not json`)
	if code := a.closedWith(); code != sdkserver.CloseInvalidData {
		t.Errorf("close code %d, want 1007", code)
	}
	<-a.done
	e.b.Wait(t, "Disconnected")
	wantAnswer(t, b.call(activate), "ActivateServerProcess", "r-act", 200, "")
}

func TestRepeatedRequestIdIsAnsweredOnceAcrossReconnects(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	c := e.connect(t, procA)
	c.call(activate)
	e.b.AddGameSession(procA, "gs-1")
	e.b.AddPlayerSession("gs-1", "psess-1", "player-1")
	accept := `{"Action":"AcceptPlayerSession","RequestId":"r-acc","GameSessionId":"gs-1","PlayerSessionId":"psess-1"}`
	wantAnswer(t, c.call(accept), "AcceptPlayerSession", "r-acc", 200, "")
	wantAnswer(t, c.call(accept), "AcceptPlayerSession", "r-acc", 200, "")
	c.c.Close(1006, "dropped")
	<-c.done
	e.b.Wait(t, "Disconnected")
	c2 := e.connect(t, procA)
	wantAnswer(t, c2.call(accept), "AcceptPlayerSession", "r-acc", 200, "")
	// A new RequestId runs again, and the player session is no longer RESERVED.
	wantAnswer(t, c2.call(strings.Replace(accept, "r-acc", "r-acc2", 1)), "AcceptPlayerSession", "r-acc2", 400, "Invalid player session")
	n := 0
	for len(e.b.Events) > 0 {
		if ev := <-e.b.Events; ev.Action == "AcceptPlayerSession" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("backend saw %d AcceptPlayerSession after the first, want 1 (the new RequestId)", n)
	}
}

func TestProcessTouchesOnlyItsOwnGameSession(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	a, b := e.connect(t, procA), e.connect(t, procB)
	a.call(activate)
	b.call(activate)
	e.b.AddGameSession(procA, "gs-a")
	e.b.AddPlayerSession("gs-a", "psess-1", "player-1")
	got := b.call(`{"Action":"AcceptPlayerSession","RequestId":"x","GameSessionId":"gs-a","PlayerSessionId":"psess-1"}`)
	wantAnswer(t, got, "AcceptPlayerSession", "x", 403, "another process")
	if _, ps := e.b.SessionStatus("gs-a"); ps["psess-1"] != "RESERVED" {
		t.Errorf("player session %v", ps)
	}
}

func TestPushesGoToTheNewestConnection(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{ReplacedGrace: time.Millisecond})
	if e.s.Push(procA, &sdkwire.TerminateProcess{TerminationTime: 1}) {
		t.Error("push to an unknown process reported sent")
	}
	old := e.connect(t, procA)
	old.call(activate)
	fresh := e.connect(t, procA)
	if code := old.closedWith(); code != sdkserver.CloseNormal {
		t.Errorf("replaced connection closed with %d, want 1000", code)
	}
	<-old.done
	if !e.s.Push(procA, &sdkwire.CreateGameSession{GameSessionId: "gs-1", MaximumPlayerSessionCount: 4, GameProperties: map[string]string{}}) {
		t.Fatal("push not sent")
	}
	got := fresh.read()
	if got["Action"] != "CreateGameSession" || got["StatusCode"] != float64(200) || got["GameSessionId"] != "gs-1" {
		t.Errorf("push %v", got)
	}
	if _, ok := got["RequestId"]; ok {
		t.Errorf("push carries a RequestId: %v", got)
	}
	// Closing the replaced connection did not count as a disconnection.
	for len(e.b.Events) > 0 {
		if ev := <-e.b.Events; ev.Action == "Disconnected" {
			t.Error("Disconnected while a newer connection is open")
		}
	}
}

func TestDisconnectedOnlyWithoutProcessEnding(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	a := e.connect(t, procA)
	a.call(activate)
	a.c.Close(1006, "")
	<-a.done
	if ev := e.b.Wait(t, "Disconnected"); ev.Process != procA {
		t.Errorf("disconnected %v", ev.Process)
	}
	b := e.connect(t, procB)
	b.call(activate)
	wantAnswer(t, b.call(`{"Action":"TerminateServerProcess","RequestId":"t"}`), "TerminateServerProcess", "t", 200, "")
	b.c.Close(1006, "")
	<-b.done
	for len(e.b.Events) > 0 {
		if ev := <-e.b.Events; ev.Action == "Disconnected" {
			t.Error("Disconnected after ProcessEnding")
		}
	}
}

func TestSlowConsumerIsDropped(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{SendQueue: 1, WriteTimeout: time.Hour})
	c := e.connect(t, procA)
	sent := 0
	for e.s.Push(procA, &sdkwire.TerminateProcess{TerminationTime: 1}) {
		if sent++; sent > 100 {
			t.Fatal("pushes never refused")
		}
	}
	<-c.done
	if e.s.Connected(procA) {
		t.Error("still connected")
	}
	e.b.Wait(t, "Disconnected")
}

func TestDisconnectClosesWithNormalClosure(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	c := e.connect(t, procA)
	if !e.s.Disconnect(procA, "compute deregistered") {
		t.Fatal("not connected")
	}
	if code := c.closedWith(); code != sdkserver.CloseNormal {
		t.Errorf("close code %d", code)
	}
	<-c.done
	e.b.Wait(t, "Disconnected")
	e.s.Forget(procA)
}

// TestDropEndsTheConnectionWithoutCloseFrame: an injected fault cuts the
// connection as a failed network would (no close frame: 1006), the process
// is reported disconnected, and it may come back.
func TestDropEndsTheConnectionWithoutCloseFrame(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	c := e.connect(t, procA)
	c.call(activate)
	if !e.s.Drop(procA) {
		t.Fatal("not connected")
	}
	if code := c.closedWith(); code != sdkserver.CloseAbrupt {
		t.Errorf("close code %d", code)
	}
	<-c.done
	e.b.Wait(t, "Disconnected")
	if e.s.Drop(procA) {
		t.Error("dropped a process without a connection")
	}
	back := e.connect(t, procA)
	wantAnswer(t, back.call(`{"Action":"HeartbeatServerProcess","RequestId":"h","HealthStatus":true}`), "HeartbeatServerProcess", "h", 200, "")
}

// TestCloseFleetClosesThatFleetOnly: a node that stops owning a fleet
// closes its processes' connections with 1012 (the SDKs reconnect), the
// process that named its fleet by ARN included, and no other fleet's.
func TestCloseFleetClosesThatFleetOnly(t *testing.T) {
	e := newEndpoint(t, sdkserver.Config{})
	a := e.connect(t, procA)
	byARN := e.connect(t, sdkserver.Process{FleetID: "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1", ComputeID: "compute-1", PID: "proc-arn"})
	other := e.connect(t, sdkserver.Process{FleetID: "fleet-2", ComputeID: "compute-1", PID: "proc-c"})
	if n := e.s.CloseFleet("fleet-1", "fleet moved"); n != 2 {
		t.Errorf("closed %d connections, want 2", n)
	}
	for _, c := range []*client{a, byARN} {
		if code := c.closedWith(); code != sdkserver.CloseServiceRestart {
			t.Errorf("close code %d", code)
		}
		<-c.done
	}
	if m := other.call(activate); m["StatusCode"] != float64(200) {
		t.Errorf("the other fleet's process after CloseFleet: %v", m)
	}
	if n := e.s.CloseFleet("fleet-1", "again"); n != 0 {
		t.Errorf("closed %d connections the second time", n)
	}
}
