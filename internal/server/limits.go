package server

import (
	"container/list"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
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
	// Upgraded (WebSocket) connections leave this count for MaxWebSockets.
	// At the cap, a new connection closes the one idle longest (a new or
	// keep-alive connection with no request in progress); with none idle,
	// the new connection is closed at once.
	MaxConns int
	// UnauthenticatedBodyBytes caps the request bytes held, across all
	// requests, before their signature is checked: 64 MiB. Small bodies
	// are exempt (api.FreeBodyBytes each).
	UnauthenticatedBodyBytes int64

	// MaxWebSockets caps the upgraded (WebSocket) connections of each
	// listener: 32768. At the cap an upgrade request is answered 503,
	// before its handshake is authenticated; the connections already
	// upgraded stay.
	MaxWebSockets int
	// MaxConnsPerIP caps the open HTTP connections of one remote address
	// on each listener: 1024 (negative: no cap). At it, a new connection
	// from the address closes that address's connection idle longest,
	// never another address's; with none idle, the new one is closed at
	// once. An IPv6 address counts under its /64.
	MaxConnsPerIP int
	// ConnRatePerIP and ConnBurstPerIP bound the new connections one
	// remote address may open on each listener, per second on average
	// and at once: 200 and 2000 (a negative rate: no bound). A connection
	// beyond is closed at once.
	ConnRatePerIP  float64
	ConnBurstPerIP int
	// PerIPExempt are addresses the per-address bounds do not apply to: a
	// load balancer or proxy whose address is every connection's peer.
	// Loopback addresses are exempt as well unless LimitLoopback is set:
	// game servers and an agent on the node's machine share 127.0.0.1.
	PerIPExempt   []netip.Prefix
	LimitLoopback bool
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
	DefaultMaxWebSockets            = 32768
	DefaultMaxConnsPerIP            = 1024
	DefaultConnRatePerIP            = 200
	DefaultConnBurstPerIP           = 2000
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
	if l.MaxWebSockets <= 0 {
		l.MaxWebSockets = DefaultMaxWebSockets
	}
	if l.MaxConnsPerIP == 0 {
		l.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	if l.ConnRatePerIP == 0 {
		l.ConnRatePerIP = DefaultConnRatePerIP
	}
	if l.ConnBurstPerIP <= 0 {
		l.ConnBurstPerIP = DefaultConnBurstPerIP
	}
	return l
}

// newHTTPServer is an http.Server for handler with the limits' timeouts,
// a body cap of maxBody on every request (handlers may set lower ones;
// api.MaxBodyBytes but on the node listener) and the connection-state
// hook of limitListener.
func newHTTPServer(handler http.Handler, maxBody int64, l Limits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           capBodies(handler, maxBody),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ConnState:         trackConnState,
		ConnContext:       withLimitedConn,
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
// Limits.MaxConns), those of each remote address and the rate at which an
// address opens them (Limits.MaxConnsPerIP, ConnRatePerIP), and counts
// its upgraded connections against Limits.MaxWebSockets (upgrades.go).
// It wraps the TCP listener itself, innermost, so that every connection
// it accepted counts, whatever wraps it later (TLS, or a wrapper peeking
// at the first byte): the count drops when the connection is closed
// through any wrapper. http.Server tells it each connection's state
// through trackConnState, which finds the *limitedConn under a wrapper by
// NetConn(), as *tls.Conn offers.
type limitListener struct {
	net.Listener
	name  string
	max   int
	maxWS int
	log   *slog.Logger
	now   func() time.Time

	mu        sync.Mutex
	open      int        // HTTP connections, counted against max
	upgraded  int        // hijacked connections, counted against maxWS
	upgrading int        // upgrade requests admitted and not yet hijacked, counted against maxWS
	idle      *list.List // of *limitedConn with no request in progress, longest idle first
	ips       *ipTable   // nil: no per-address bounds

	evicted, refused           atomic.Int64 // listener full
	evictedPerIP, refusedPerIP atomic.Int64 // address at its cap
	refusedRate, refusedWS     atomic.Int64 // address too fast; WebSocket cap
	rateLog, perIPLog, wsLog   periodicLog
}

func newLimitListener(ln net.Listener, name string, lim Limits, now func() time.Time, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, name: name, max: lim.MaxConns, maxWS: lim.MaxWebSockets, log: log, now: now,
		idle: list.New(), ips: newIPTable(lim)}
}

// outcome is what admit made of a new connection.
type outcome int

const (
	admitted      outcome = iota
	evictedIdlest         // admitted, closing the listener's connection idle longest
	evictedOwn            // admitted, closing its address's connection idle longest
	refusedFull           // closed at once: every connection busy
	refusedIP             // closed at once: the address holds its most connections, all busy
	refusedRate           // closed at once: the address opens connections too fast
)

// Accept returns the next connection, making room for it when the
// listener or its address is full.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, victim, out := l.admit(c)
		if lc == nil {
			c.Close() // the refusal was counted before the close a client sees
			l.logRefusal(out, c.RemoteAddr())
			continue
		}
		if victim != nil {
			victim.Close() // counted in admit, before the close its client sees
			l.logEviction(out)
		}
		return lc, nil
	}
}

// admit counts c in, or says why it is refused. When c takes the place
// of an idle connection, that one is returned to be closed: the
// address's own when the address is at its cap, else the listener's
// idlest when the listener is full.
func (l *limitListener) admit(c net.Conn) (lc, victim *limitedConn, out outcome) {
	now := l.now()
	addr, perIP := l.ips.key(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	lc = &limitedConn{Conn: c, l: l}
	if perIP {
		e := l.ips.entry(addr, now)
		if !l.ips.take(e, now) {
			l.refusedRate.Add(1)
			return nil, nil, refusedRate
		}
		if l.ips.full(e) {
			if victim = front(e.idle); victim == nil {
				l.refusedPerIP.Add(1)
				return nil, nil, refusedIP
			}
			l.evictedPerIP.Add(1)
			out = evictedOwn
		}
		lc.ip, lc.addr = e, addr
	}
	if victim == nil && l.open >= l.max {
		if victim = front(l.idle); victim == nil {
			l.refused.Add(1)
			return nil, nil, refusedFull
		}
		l.evicted.Add(1)
		out = evictedIdlest
	}
	if victim != nil {
		victim.setBusy()
	}
	l.open++
	if lc.ip != nil {
		lc.ip.open++
	}
	lc.setIdle()
	return lc, victim, out
}

// front is the connection idle longest in idle, or nil.
func front(idle *list.List) *limitedConn {
	if e := idle.Front(); e != nil {
		return e.Value.(*limitedConn)
	}
	return nil
}

// logRefusal logs a refused connection: those refused for a full
// listener at the 1st, 2nd, 4th, 8th... refusal, the others at most once
// a period.
func (l *limitListener) logRefusal(out outcome, remote net.Addr) {
	switch out {
	case refusedFull:
		if n := l.refused.Load(); n&(n-1) == 0 {
			l.log.Warn("listener full: refusing connections; every connection is busy", "listener", l.name, "max", l.max, "refused", n)
		}
	case refusedIP:
		if n, ok := l.perIPLog.note(l.now()); ok {
			l.log.Warn("an address holds its most connections, all busy: refusing its new ones", "listener", l.name,
				"max_per_address", l.ips.maxOpen, "refused", n, "last_address", remote.String())
		}
	case refusedRate:
		if n, ok := l.rateLog.note(l.now()); ok {
			l.log.Warn("an address opens connections too fast: refusing them", "listener", l.name,
				"per_second", l.ips.rate, "burst", l.ips.burst, "refused", n, "last_address", remote.String())
		}
	}
}

// logEviction logs evictions at the 1st, 2nd, 4th, 8th... of their kind.
func (l *limitListener) logEviction(out outcome) {
	if out == evictedOwn {
		if n := l.evictedPerIP.Load(); n&(n-1) == 0 {
			l.log.Warn("an address holds its most connections: closing its connections idle longest", "listener", l.name,
				"max_per_address", l.ips.maxOpen, "evicted", n)
		}
		return
	}
	if n := l.evicted.Load(); n&(n-1) == 0 {
		l.log.Warn("listener full: closing the connections idle longest", "listener", l.name, "max", l.max, "evicted", n)
	}
}

// limitedConn is a connection counted by its limitListener. Its fields
// are guarded by l.mu.
type limitedConn struct {
	net.Conn
	l        *limitListener
	ip       *ipEntry   // the remote address's entry; nil when exempt, or once upgraded
	addr     netip.Addr // the key of ip
	elem     *list.Element
	ipElem   *list.Element // in l.idle and ip.idle while idle
	upgrade  bool          // holds one of l.upgrading
	upgraded bool
	closed   bool
}

// NetConn is the connection under c.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

// setIdle puts c last in the idle lists (of its listener and address).
func (c *limitedConn) setIdle() {
	if c.elem == nil {
		c.elem = c.l.idle.PushBack(c)
	} else {
		c.l.idle.MoveToBack(c.elem)
	}
	if c.ip == nil {
		return
	}
	if c.ipElem == nil {
		c.ipElem = c.ip.idle.PushBack(c)
	} else {
		c.ip.idle.MoveToBack(c.ipElem)
	}
}

// setBusy takes c out of the idle lists.
func (c *limitedConn) setBusy() {
	if c.elem != nil {
		c.l.idle.Remove(c.elem)
		c.elem = nil
	}
	if c.ipElem != nil {
		c.ip.idle.Remove(c.ipElem)
		c.ipElem = nil
	}
}

// Close closes the connection and uncounts it, once.
func (c *limitedConn) Close() error {
	l := c.l
	now := l.now()
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		c.setBusy()
		c.endUpgrade()
		if c.upgraded {
			l.upgraded--
		} else {
			l.open--
			if c.ip != nil {
				l.ips.release(c.addr, c.ip, now)
			}
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
		c.setIdle()
	case http.StateActive:
		c.setBusy()
	case http.StateHijacked:
		// A WebSocket upgrade: authenticated, long-lived, and no
		// longer the http.Server's (which cleared its deadlines).
		c.setBusy()
		c.endUpgrade()
		c.upgraded = true
		l.open--
		l.upgraded++
		if c.ip != nil {
			l.ips.release(c.addr, c.ip, l.now())
			c.ip = nil
		}
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

// limit wraps ln with the connection caps of s's limits.
func (s *Server) limit(ln net.Listener, name string) *limitListener {
	now := s.cfg.Now
	if now == nil {
		now = time.Now
	}
	l := newLimitListener(ln, name, s.limits, now, s.cfg.Log)
	s.limited.Store(name, l)
	return l
}
