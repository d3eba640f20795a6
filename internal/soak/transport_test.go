package soak

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// The Go HTTP transport sometimes closes its own connection while the
// answer is being read: its writer goroutine fails to finish writing the
// request (reading past the end of a request body the AWS SDK has already
// closed) and tears the connection down, so a complete 200 answer cannot
// be read to its end (aws/aws-sdk-go-v2#2737; the SDK's default retryer
// retries it). The harness counts these apart from the server's failures,
// and only when it saw them happen: the failing read came after the
// client closed the connection, and nothing had failed on the socket
// before (a server that reset the connection fails a read or write
// first).

// tracedConn notes who ended a connection first.
type tracedConn struct {
	net.Conn
	closed    atomic.Bool // Close was called by the client
	socketErr atomic.Bool // a read or write failed before that
}

func (c *tracedConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

func (c *tracedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.note(err)
	return n, err
}

func (c *tracedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.note(err)
	return n, err
}

func (c *tracedConn) note(err error) {
	if err != nil && err != io.EOF && !c.closed.Load() {
		c.socketErr.Store(true)
	}
	if err == io.EOF && !c.closed.Load() {
		c.socketErr.Store(true) // the server closed it
	}
}

// closedByClient reports whether c was closed by the client with no
// failure on the socket before.
func (c *tracedConn) closedByClient() bool { return c.closed.Load() && !c.socketErr.Load() }

// clientClosedError is a read that failed because the client's transport
// had closed the connection itself.
type clientClosedError struct{ err error }

func (e *clientClosedError) Error() string {
	return e.err.Error() + " (the client's transport had closed the connection itself)"
}
func (e *clientClosedError) Unwrap() error { return e.err }

// tracingTransport marks the failures of connections the transport closed
// itself as clientClosedError.
type tracingTransport struct{ *http.Transport }

func newTransport(keepAlive bool) tracingTransport {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return tracingTransport{&http.Transport{MaxIdleConnsPerHost: 64, DisableKeepAlives: !keepAlive,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &tracedConn{Conn: c}, nil
		}}}
}

func (t tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var conn atomic.Pointer[tracedConn]
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if c, ok := i.Conn.(*tracedConn); ok {
			conn.Store(c)
		}
	}}
	resp, err := t.Transport.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		return nil, mark(err, &conn)
	}
	resp.Body = &tracedBody{ReadCloser: resp.Body, conn: &conn}
	return resp, nil
}

type tracedBody struct {
	io.ReadCloser
	conn *atomic.Pointer[tracedConn]
}

func (b *tracedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = mark(err, b.conn)
	}
	return n, err
}

func mark(err error, conn *atomic.Pointer[tracedConn]) error {
	if c := conn.Load(); c != nil && c.closedByClient() {
		return &clientClosedError{err}
	}
	return err
}
