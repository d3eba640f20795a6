package server

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// tlsRecordHandshake is the first byte of every TLS connection: the record
// type of the ClientHello. No HTTP request starts with it (a method is
// ASCII letters), so one byte tells the two apart.
const tlsRecordHandshake = 0x16

// dualListener serves plain and TLS connections on one port. The C++
// server SDK (inside Unreal and O3DE servers) speaks TLS to every URL, ws://
// included, while the Go and C# SDKs, the AWS CLI and the SDKs speak what
// the URL's scheme says: with both on one port, the single URL Anylift
// hands out (ws://host:port) works for all of them.
//
// Each accepted connection is classified on its own goroutine by its first
// byte, read within the sniff timeout, so a client that connects and says
// nothing never holds up the others; TLS connections are handed to the
// HTTP server as *tls.Conn, whose handshake the server then runs under its
// own deadlines.
type dualListener struct {
	net.Listener
	tls   *tls.Config
	sniff time.Duration

	conns chan net.Conn
	errs  chan error
	done  chan struct{}
	once  sync.Once
}

func newDualListener(ln net.Listener, cfg *tls.Config, sniff time.Duration) *dualListener {
	d := &dualListener{Listener: ln, tls: cfg, sniff: sniff,
		conns: make(chan net.Conn), errs: make(chan error), done: make(chan struct{})}
	go d.acceptLoop()
	return d
}

// acceptLoop accepts raw connections. An error goes to the next Accept;
// the loop waits for it to be taken, so the HTTP server's back-off on
// temporary errors (too many open files) paces this loop too.
func (d *dualListener) acceptLoop() {
	for {
		c, err := d.Listener.Accept()
		if err != nil {
			select {
			case d.errs <- err:
			case <-d.done:
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				continue
			}
			return
		}
		go d.classify(c)
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// classify reads the connection's first byte and hands it on, as TLS or
// plain, with that byte given back to whoever reads it next.
func (d *dualListener) classify(c net.Conn) {
	var first [1]byte
	c.SetReadDeadline(time.Now().Add(d.sniff))
	if _, err := c.Read(first[:]); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	var out net.Conn = &peekedConn{Conn: c, first: first[0], pending: true}
	if first[0] == tlsRecordHandshake {
		out = tls.Server(out, d.tls)
	}
	select {
	case d.conns <- out:
	case <-d.done:
		c.Close()
	}
}

// Accept returns the next classified connection.
func (d *dualListener) Accept() (net.Conn, error) {
	select {
	case c := <-d.conns:
		return c, nil
	case err := <-d.errs:
		return nil, err
	case <-d.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections still being classified are closed.
func (d *dualListener) Close() error {
	err := net.ErrClosed
	d.once.Do(func() {
		close(d.done)
		err = d.Listener.Close()
	})
	return err
}

// peekedConn gives back the byte read to classify the connection.
type peekedConn struct {
	net.Conn
	first   byte
	pending bool
}

// NetConn is the connection under c, for the connection cap's bookkeeping
// (limits.go), as *tls.Conn offers it.
func (c *peekedConn) NetConn() net.Conn { return c.Conn }

func (c *peekedConn) Read(p []byte) (int, error) {
	if c.pending && len(p) > 0 {
		c.pending = false
		p[0] = c.first
		return 1, nil
	}
	return c.Conn.Read(p)
}
