package sdkserver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
)

// session is one connection of a process: the reader (run's goroutine)
// decodes frames and runs requests one at a time; the writer owns all
// writes and the keepalive pings. Any failure kills the connection; the
// process's state survives it in its proc.
type session struct {
	s    *Server
	h    *Handshake
	c    Conn
	q    chan []byte   // frames for the writer; bounded
	done chan struct{} // closed by kill

	killOnce sync.Once
	wg       sync.WaitGroup // the writer and the closer
}

func newSession(s *Server, h *Handshake, c Conn) *session {
	return &session{s: s, h: h, c: c, q: make(chan []byte, s.cfg.SendQueue), done: make(chan struct{})}
}

// run serves the connection and returns when it has closed and the
// writer has ended.
func (x *session) run() {
	x.wg.Add(1)
	go x.writeLoop()
	x.readLoop()
	x.kill(CloseNormal, "")
	x.wg.Wait()
}

// kill closes the connection with code and reason; only the first call
// counts. The close handshake runs in its own goroutine so that kill
// never blocks.
func (x *session) kill(code int, reason string) {
	x.killOnce.Do(func() {
		close(x.done)
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			x.c.Close(code, reason)
		}()
	})
}

// send queues frame for the writer. A full queue means the process does
// not read: the connection is dropped (1011) and send reports false.
func (x *session) send(frame []byte) bool {
	select {
	case <-x.done:
		return false
	default:
	}
	select {
	case x.q <- frame:
		return true
	default:
		x.s.cfg.Logger.Warn("dropping a slow process connection", "pid", x.h.PID, "fleet", x.h.FleetID)
		x.kill(CloseInternalError, "send queue full")
		return false
	}
}

func (x *session) writeLoop() {
	defer x.wg.Done()
	ping := time.NewTicker(x.s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-x.done:
			return
		case frame := <-x.q:
			ctx, cancel := context.WithTimeout(context.Background(), x.s.cfg.WriteTimeout)
			err := x.c.Write(ctx, frame)
			cancel()
			if err != nil {
				x.kill(CloseInternalError, "write failed")
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(context.Background(), x.s.cfg.PongTimeout)
			err := x.c.Ping(ctx)
			cancel()
			if err != nil {
				x.kill(CloseInternalError, "no pong")
				return
			}
		}
	}
}

// readLoop reads frames until the connection fails or a frame is garbage.
// Pongs are only read while no request is running, so PongTimeout must
// exceed RequestTimeout.
func (x *session) readLoop() {
	for {
		frame, err := x.c.Read(x.s.ctx)
		if err != nil {
			x.s.cfg.Logger.Debug("process connection closed", "pid", x.h.PID, "code", closeCode(err))
			return
		}
		if !x.handle(frame) {
			return
		}
	}
}

// handle answers one frame. It reports false for a frame that is not a
// JSON object, after closing the connection with 1007: such a frame comes
// from no SDK, and nothing in it can be answered.
func (x *session) handle(frame []byte) bool {
	f, r, err := sdkwire.DecodeRequest(frame)
	if err != nil {
		var we *sdkwire.Error
		if !errors.As(err, &we) || we.Garbage {
			x.kill(CloseInvalidData, "frame is not a JSON object")
			return false
		}
		x.send(sdkwire.EncodeError(f.Action, f.RequestId, we.Status, we.Message))
		return true
	}
	a, first := x.s.begin(x.h.Process, f.RequestId)
	if first {
		reply, status := x.execute(f, r)
		x.s.finish(x.h.Process, f.RequestId, a, reply, status,
			status == sdkwire.StatusOK && f.Action == sdkwire.ActionTerminateServerProcess)
	}
	select {
	case <-a.done:
		x.send(a.frame)
	case <-x.done:
	}
	return true
}

// execute runs request r on the Backend and returns the answer frame and
// its status.
func (x *session) execute(f *sdkwire.Frame, r sdkwire.Request) ([]byte, int) {
	timeout := x.s.cfg.RequestTimeout
	if f.Action == sdkwire.ActionActivateServerProcess {
		timeout = x.s.cfg.ActivateTimeout
	}
	ctx, cancel := context.WithTimeout(x.s.ctx, timeout)
	defer cancel()
	res, err := dispatch(ctx, x.s.cfg.Backend, x.h.Process, r)
	if err == nil {
		reply, err := sdkwire.EncodeResponse(f.Action, f.RequestId, res)
		if err == nil {
			return reply, sdkwire.StatusOK
		}
	}
	status, msg := statusOf(err)
	var no *store.NotOwner
	if errors.As(err, &no) {
		// The fleet moved to another node while this connection was
		// here: the SDK reconnects, through the load balancer, to a node
		// that sends it to the fleet's owner.
		x.s.cfg.Logger.Info("process's fleet is served by another node now; closing its connection", "pid", x.h.PID, "fleet", no.FleetID)
		go x.kill(CloseServiceRestart, "the fleet is served by another node")
		return sdkwire.EncodeError(f.Action, f.RequestId, status, msg), status
	}
	if status >= 500 {
		x.s.cfg.Logger.Error("process request failed", "action", f.Action, "pid", x.h.PID, "err", err)
	}
	return sdkwire.EncodeError(f.Action, f.RequestId, status, msg), status
}
