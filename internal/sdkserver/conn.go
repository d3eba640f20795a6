package sdkserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"
)

// Conn is one message-oriented, full-duplex connection to a process: the
// part of a WebSocket the protocol core uses. Read and Write may run at the
// same time as each other, Ping and Close; Close may be called more than
// once and from any goroutine, and makes a blocked Read return.
type Conn interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, frame []byte) error
	Ping(ctx context.Context) error
	Close(code int, reason string) error
}

// WebSocket close codes the endpoint uses.
const (
	CloseNormal         = 1000 // replaced by a newer connection, or deregistered: do not come back
	CloseInvalidData    = 1007 // a frame that is not a JSON object
	CloseInternalError  = 1011 // a write failed or the send queue overflowed: reconnect
	CloseServiceRestart = 1012 // this node is shutting down: reconnect (elsewhere)
	// CloseAbrupt sends no close frame: the connection just ends, as when
	// the network fails (1006 is what the other side reports).
	CloseAbrupt = 1006
)

// wsConn adapts a coder/websocket connection. Frames are sent as text; a
// binary frame's payload is read like a text frame's.
type wsConn struct{ c *websocket.Conn }

func (w wsConn) Read(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	return b, err
}

func (w wsConn) Write(ctx context.Context, frame []byte) error {
	return w.c.Write(ctx, websocket.MessageText, frame)
}

func (w wsConn) Ping(ctx context.Context) error { return w.c.Ping(ctx) }

func (w wsConn) Close(code int, reason string) error {
	if code == CloseAbrupt {
		return w.c.CloseNow()
	}
	return w.c.Close(websocket.StatusCode(code), reason)
}

// CloseError is returned by a pipe end's Read and Write once the pipe is closed.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string { return fmt.Sprintf("closed: %d %s", e.Code, e.Reason) }

// Pipe returns the two ends of an in-memory Conn, for tests. Each direction
// buffers 16 frames; Close on either end closes both with the first code.
func Pipe() (Conn, Conn) {
	p := &pipe{done: make(chan struct{})}
	ab, ba := make(chan []byte, 16), make(chan []byte, 16)
	return &pipeEnd{p: p, in: ba, out: ab}, &pipeEnd{p: p, in: ab, out: ba}
}

type pipe struct {
	once sync.Once
	done chan struct{}
	err  *CloseError
}

type pipeEnd struct {
	p       *pipe
	in, out chan []byte
}

func (e *pipeEnd) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-e.in:
		return b, nil
	case <-e.p.done:
		return nil, e.p.err
	case <-ctx.Done():
		e.Close(1008, "read deadline")
		return nil, ctx.Err()
	}
}

func (e *pipeEnd) Write(ctx context.Context, frame []byte) error {
	select {
	case <-e.p.done:
		return e.p.err
	default:
	}
	select {
	case e.out <- append([]byte(nil), frame...):
		return nil
	case <-e.p.done:
		return e.p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *pipeEnd) Ping(ctx context.Context) error {
	select {
	case <-e.p.done:
		return e.p.err
	default:
		return nil
	}
}

func (e *pipeEnd) Close(code int, reason string) error {
	e.p.once.Do(func() {
		e.p.err = &CloseError{Code: code, Reason: reason}
		close(e.p.done)
	})
	return nil
}

// closeCode reports the close code carried by err, or -1.
func closeCode(err error) int {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return int(websocket.CloseStatus(err))
}
