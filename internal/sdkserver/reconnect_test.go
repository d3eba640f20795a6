package sdkserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
	"github.com/coder/websocket"
)

// heldHandshake is an sdktest.Backend whose handshakes numbered in held
// (counted from 1) wait in Authenticate until released, answering what
// release sends then (nil admits), and which reports, at each
// disconnection, whether the Server still counted the process as
// connected (what the real backend asks before it records the process
// disconnected).
type heldHandshake struct {
	*sdktest.Backend
	srv     *sdkserver.Server
	n       atomic.Int32
	held    map[int32]bool
	entered chan int32
	release chan error
	atClose chan bool
}

func newHeldHandshake(t *testing.T, held ...int32) (*heldHandshake, string) {
	h := &heldHandshake{Backend: sdktest.NewBackend(), held: map[int32]bool{}, entered: make(chan int32, len(held)),
		release: make(chan error, len(held)), atClose: make(chan bool, 8)}
	for _, n := range held {
		h.held[n] = true
	}
	h.AllowToken("fleet-1", "compute-1", "tok")
	s := sdkserver.New(sdkserver.Config{Auth: h, Backend: h})
	h.srv = s
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	// A test that fails early still lets the held handshakes go
	// (cleanups run last first).
	t.Cleanup(func() {
		for range held {
			select {
			case h.release <- errors.New("the test is over"):
			default:
			}
		}
	})
	return h, "ws" + strings.TrimPrefix(hs.URL, "http") + "/?Authorization=tok&ComputeId=compute-1&FleetId=fleet-1&pID=proc-1"
}

func (h *heldHandshake) Authenticate(ctx context.Context, hs *sdkserver.Handshake) error {
	if n := h.n.Add(1); h.held[n] {
		h.entered <- n
		if err := <-h.release; err != nil {
			return err
		}
	}
	return h.Backend.Authenticate(ctx, hs)
}

func (h *heldHandshake) ProcessDisconnected(ctx context.Context, p sdkserver.Process) {
	h.atClose <- h.srv.Connected(p)
	h.Backend.ProcessDisconnected(ctx, p)
}

type dialed struct {
	c    *websocket.Conn
	resp *http.Response
	err  error
}

// dialAsync dials url and sends the outcome on the channel it returns.
func dialAsync(t *testing.T, url string) chan dialed {
	out := make(chan dialed, 1)
	go func() {
		c, resp, err := dial(t, url, nil)
		out <- dialed{c, resp, err}
	}()
	return out
}

// closeDuringReconnect connects the process, starts a reconnect that
// waits in Authenticate (the second handshake, which must be held),
// closes the first connection meanwhile, and answers the reconnect's
// outcome to come and whether the Server counted the process as
// connected at that close.
func (h *heldHandshake) closeDuringReconnect(t *testing.T, url string) (chan dialed, bool) {
	t.Helper()
	first, _, err := dial(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Wait(t, "Connected")
	second := dialAsync(t, url)
	<-h.entered
	first.Close(websocket.StatusGoingAway, "")
	return second, <-h.atClose
}

var proc1 = sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "proc-1"}

// A reconnect's handshake is authenticated (the real backend records the
// process connected) before its connection is attached. The previous
// connection closing in between must find the process still connected
// here, or the real backend would record it disconnected after the new
// connection's record. If that handshake is then refused, the process is
// reported disconnected after all.
func TestConnectionClosingDuringAReconnectsHandshake(t *testing.T) {
	for _, refused := range []bool{false, true} {
		name := map[bool]string{false: "admitted", true: "refused"}[refused]
		t.Run(name, func(t *testing.T) {
			h, url := newHeldHandshake(t, 2)
			second, connected := h.closeDuringReconnect(t, url)
			if !connected {
				t.Fatal("the process counted as disconnected while its reconnect was being authenticated")
			}
			if refused {
				h.release <- errors.New("refused")
			} else {
				h.release <- nil
			}
			d := <-second
			if refused {
				if d.err == nil || d.resp == nil || d.resp.StatusCode != http.StatusForbidden {
					t.Fatalf("refused handshake: %v, %v", d.resp, d.err)
				}
				if connected := <-h.atClose; connected {
					t.Error("reported disconnected after the refused reconnect, but still counted as connected")
				}
				if h.srv.Connected(proc1) {
					t.Error("connected after the reconnect was refused")
				}
				return
			}
			if d.err != nil {
				t.Fatal(d.err)
			}
			defer d.c.Close(websocket.StatusNormalClosure, "")
			h.Wait(t, "Connected")
			if got := roundTrip(t, d.c, activate); got != `{"Action":"ActivateServerProcess","RequestId":"r-act","StatusCode":200}` {
				t.Errorf("the reconnected process: %s", got)
			}
			select {
			case c := <-h.atClose:
				t.Errorf("reported disconnected once more (connected %v) though its reconnect was admitted", c)
			default:
			}
		})
	}
}

// Forget (a process taken for lost) keeps what the Server counts of a
// handshake being authenticated, so that the count stays true for the
// handshakes and closes after it.
func TestForgetKeepsAHandshakeBeingAuthenticated(t *testing.T) {
	h, url := newHeldHandshake(t, 2, 3)
	second, _ := h.closeDuringReconnect(t, url)
	h.srv.Forget(proc1)
	h.release <- nil
	d := <-second
	if d.err != nil {
		t.Fatal(d.err)
	}
	h.Wait(t, "Connected")
	// The third handshake waits while the second connection closes: the
	// process is still counted as connected here.
	third := dialAsync(t, url)
	<-h.entered
	d.c.Close(websocket.StatusGoingAway, "")
	if connected := <-h.atClose; !connected {
		t.Error("the process counted as disconnected while a handshake of it was being authenticated")
	}
	h.release <- nil
	if d := <-third; d.err != nil {
		t.Fatal(d.err)
	} else {
		d.c.Close(websocket.StatusNormalClosure, "")
	}
}

// A refused handshake of a process never connected here reports nothing
// and leaves nothing behind.
func TestRefusedStrangerLeavesNoTrace(t *testing.T) {
	env := sdktest.Start(t, sdkserver.Config{})
	p := sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "stranger"}
	if _, resp, err := dial(t, env.URL+"/?Authorization=bad&ComputeId=compute-1&FleetId=fleet-1&pID=stranger", nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v, %v", resp, err)
	}
	if env.Server.Connected(p) {
		t.Error("a refused stranger counts as connected")
	}
	select {
	case e := <-env.Backend.Events:
		t.Errorf("a refused stranger reached the backend: %s", e.Action)
	default:
	}
}
