package server

import (
	"container/list"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anylift/anylift/internal/api"
)

// Limits bound what one client can hold on any listener: the API listener
// (shared with the process endpoint's WebSocket upgrades), the TLS process
// listener, the node listener and the player gateway. Zero values take the
// defaults given beside them (docs/decisions.md, "Listeners").
type Limits struct {
	// ReadHeaderTimeout bounds the request line and headers: 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds a whole request, body included, from its first
	// byte: 60 s. A WebSocket upgrade leaves it behind (see Hijack).
	ReadTimeout time.Duration
	// WriteTimeout bounds the handler and the answer, from the end of the
	// request's headers: 90 s.
	WriteTimeout time.Duration
	// IdleTimeout bounds a keep-alive connection between requests: 120 s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line and headers: 64 KiB.
	MaxHeaderBytes int
	// MaxConns caps the open HTTP connections of each listener: 4096.
	// Upgraded (WebSocket) connections are authenticated and not counted.
	// At the cap, a new connection closes the one idle longest (a new or
	// keep-alive connection with no request in progress); with none idle,
	// the new connection is closed at once.
	MaxConns int
	// UnauthenticatedBodyBytes caps the request bytes held, across all
	// requests, before their signature is checked: 64 MiB. Small bodies
	// are exempt (api.FreeBodyBytes each).
	UnauthenticatedBodyBytes int64
}

// Default limits.
const (
	DefaultReadHeaderTimeout        = 10 * time.Second
	DefaultReadTimeout              = 60 * time.Second
	DefaultWriteTimeout             = 90 * time.Second
	DefaultIdleTimeout              = 120 * time.Second
	DefaultMaxHeaderBytes           = 64 << 10
	DefaultMaxConns                 = 4096
	DefaultUnauthenticatedBodyBytes = 64 << 20
)

// withDefaults fills the zero members of l.
func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.WriteTimeout, DefaultWriteTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.UnauthenticatedBodyBytes <= 0 {
		l.UnauthenticatedBodyBytes = DefaultUnauthenticatedBodyBytes
	}
	return l
}

// newHTTPServer is an http.Server for handler with the limits' timeouts,
// a body cap on every request (handlers may set lower ones) and the
// connection-state hook of limitListener.
func newHTTPServer(handler http.Handler, l Limits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           capBodies(handler, api.MaxBodyBytes),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ConnState:         trackConnState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// capBodies refuses to read more than max bytes of any request body.
func capBodies(next http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// longLived lifts the whole-request read deadline for a handler that
// streams for longer than ReadTimeout (the event stream): with the
// deadline left, the server's background read would end the request when
// it passes. Such a handler bounds each write itself.
func longLived(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetReadDeadline(time.Time{})
		next.ServeHTTP(w, r)
	})
}

// limitListener caps the open HTTP connections of one listener (see
// Limits.MaxConns). It wraps the TCP listener itself, innermost, so that
// every connection it accepted counts, whatever wraps it later (TLS, or
// a wrapper peeking at the first byte): the count drops when the
// connection is closed through any wrapper. http.Server tells it each
// connection's state through trackConnState, which finds the
// *limitedConn under a wrapper by NetConn(), as *tls.Conn offers.
type limitListener struct {
	net.Listener
	name string
	max  int
	log  *slog.Logger

	mu       sync.Mutex
	open     int        // HTTP connections, counted against max
	upgraded int        // hijacked connections, not counted
	idle     *list.List // of *limitedConn with no request in progress, longest idle first

	evicted, refused atomic.Int64
}

func newLimitListener(ln net.Listener, name string, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, name: name, max: max, log: log, idle: list.New()}
}

// Accept returns the next connection, making room for it when the
// listener is full.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l}
		var victim *limitedConn
		l.mu.Lock()
		if l.open >= l.max {
			front := l.idle.Front()
			if front == nil {
				l.mu.Unlock()
				n := l.refused.Add(1) // counted before the close a client sees
				c.Close()
				if n&(n-1) == 0 { // logged at 1, 2, 4, 8...
					l.log.Warn("listener full: refusing connections; every connection is busy", "listener", l.name, "max", l.max, "refused", n)
				}
				continue
			}
			victim = front.Value.(*limitedConn)
			l.idle.Remove(front)
			victim.elem = nil
		}
		l.open++
		lc.elem = l.idle.PushBack(lc)
		l.mu.Unlock()
		if victim != nil {
			n := l.evicted.Add(1) // counted before the close its client sees
			victim.Close()
			if n&(n-1) == 0 {
				l.log.Warn("listener full: closing the connections idle longest", "listener", l.name, "max", l.max, "evicted", n)
			}
		}
		return lc, nil
	}
}

// Stats reports the open HTTP and upgraded connections, and how many
// connections were evicted or refused so far.
func (l *limitListener) Stats() (open, upgraded int, evicted, refused int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.upgraded, l.evicted.Load(), l.refused.Load()
}

// limitedConn is a connection counted by its limitListener.
type limitedConn struct {
	net.Conn
	l        *limitListener
	elem     *list.Element // in l.idle while idle; guarded by l.mu
	upgraded bool          // guarded by l.mu
	closed   bool          // guarded by l.mu
}

// NetConn is the connection under c.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

// Close closes the connection and uncounts it, once.
func (c *limitedConn) Close() error {
	l := c.l
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		if c.elem != nil {
			l.idle.Remove(c.elem)
			c.elem = nil
		}
		if c.upgraded {
			l.upgraded--
		} else {
			l.open--
		}
	}
	l.mu.Unlock()
	return c.Conn.Close()
}

// setState follows the connection's state in its http.Server.
func (c *limitedConn) setState(st http.ConnState) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed || c.upgraded {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		if c.elem == nil {
			c.elem = l.idle.PushBack(c)
		} else {
			l.idle.MoveToBack(c.elem)
		}
	case http.StateActive:
		if c.elem != nil {
			l.idle.Remove(c.elem)
			c.elem = nil
		}
	case http.StateHijacked:
		// A WebSocket upgrade: authenticated, long-lived, and no
		// longer the http.Server's (which cleared its deadlines).
		if c.elem != nil {
			l.idle.Remove(c.elem)
			c.elem = nil
		}
		c.upgraded = true
		l.open--
		l.upgraded++
	}
}

// trackConnState is the http.Server.ConnState hook of every listener.
func trackConnState(c net.Conn, st http.ConnState) {
	if lc := findLimited(c); lc != nil {
		lc.setState(st)
	}
}

// findLimited finds the *limitedConn under wrappers that expose the
// connection they wrap with NetConn().
func findLimited(c net.Conn) *limitedConn {
	for range 8 {
		switch v := c.(type) {
		case *limitedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// limit wraps ln with the connection cap of s's limits.
func (s *Server) limit(ln net.Listener, name string) *limitListener {
	l := newLimitListener(ln, name, s.limits.MaxConns, s.cfg.Log)
	s.limited.Store(name, l)
	return l
}

// ConnStats counts one listener's connections.
type ConnStats struct {
	Open     int   // HTTP connections, counted against Limits.MaxConns
	Upgraded int   // WebSocket connections, not counted
	Evicted  int64 // idle connections closed to make room, so far
	Refused  int64 // new connections closed because every one was busy
}

// ListenerStats reports the connections of the listener named name:
// "API", "TLS", "node" or "player gateway".
func (s *Server) ListenerStats(name string) ConnStats {
	v, ok := s.limited.Load(name)
	if !ok {
		return ConnStats{}
	}
	var st ConnStats
	st.Open, st.Upgraded, st.Evicted, st.Refused = v.(*limitListener).Stats()
	return st
}
