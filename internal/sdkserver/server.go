// Package sdkserver is the process endpoint: the WebSocket side of GameLift's
// server SDK 5 protocol. It authenticates the handshake, keeps one reader
// and one writer per connection, knows processes by their pID across
// reconnects, answers repeated RequestIds from a cache, and hands every
// request to a Backend. Pushes reach a process through Server.Push.
package sdkserver

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Config holds what a Server needs. Auth and Backend are required; zero
// durations and sizes take the defaults given beside them.
type Config struct {
	Auth    Authenticator
	Backend Backend
	Logger  *slog.Logger // default slog.Default()
	// Refuse, when set, answers a handshake that Auth refused, in place
	// of 403 Forbidden, and reports whether it did: a refusal that says
	// nothing of the process's credentials (the store unreachable, the
	// fleet served by another node) deserves another answer, which the
	// SDKs retry.
	Refuse func(w http.ResponseWriter, r *http.Request, err error) bool

	SendQueue       int           // frames queued per connection before it is dropped as slow: 64
	MaxFrameBytes   int64         // largest frame read: 1 MiB
	WriteTimeout    time.Duration // one frame's write: 10 s
	PingInterval    time.Duration // WebSocket pings proving the peer alive: 30 s
	PongTimeout     time.Duration // a ping unanswered this long drops the connection: 30 s
	ActivateTimeout time.Duration // Backend deadline for ActivateServerProcess (the SDKs wait 6 s): 5 s
	RequestTimeout  time.Duration // Backend deadline for other requests (the SDKs wait 20 s): 15 s
	ReplacedGrace   time.Duration // an older connection of a process is closed this long after a newer one opens: 10 s
	AnswerCache     int           // answers kept per process for repeated RequestIds: 64
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.PingInterval, 30*time.Second)
	def(&c.PongTimeout, 30*time.Second)
	def(&c.ActivateTimeout, 5*time.Second)
	def(&c.RequestTimeout, 15*time.Second)
	def(&c.ReplacedGrace, 10*time.Second)
	if c.SendQueue <= 0 {
		c.SendQueue = 64
	}
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = 1 << 20
	}
	if c.AnswerCache <= 0 {
		c.AnswerCache = 64
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Server is the process endpoint. It is an http.Handler for the upgrade
// requests, and the hub through which the service pushes to processes.
// Close ends every connection and waits for their goroutines.
type Server struct {
	cfg    Config
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per served connection

	mu     sync.Mutex
	procs  map[Process]*proc
	closed bool

	// conns counts open connections, readable without mu (metrics).
	conns atomic.Int64
}

// Connections is the number of open process connections on this Server.
// It takes no lock, so a metrics scrape never waits on the endpoint.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// New returns a Server; it starts nothing.
func New(cfg Config) *Server {
	cfg.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, ctx: ctx, cancel: cancel, procs: map[Process]*proc{}}
}

// IsUpgrade reports whether r asks for a WebSocket upgrade, so that a
// listener shared with the control-plane API can route it here.
func IsUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && headerHas(r.Header, "Connection", "upgrade") &&
		headerHas(r.Header, "Upgrade", "websocket")
}

// ServeHTTP authenticates the handshake, refusing it with 403 before the
// upgrade (or as Config.Refuse answers), then serves the connection until it closes. Any path is
// accepted: "/" and "/" followed by anything.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !IsUpgrade(r) {
		s.cfg.Logger.Info("process handshake refused: not a WebSocket upgrade", "remote", r.RemoteAddr)
		http.Error(w, "expected a WebSocket upgrade", http.StatusUpgradeRequired)
		return
	}
	h, err := parseHandshake(r)
	if err == nil {
		if bad := checkHandshake(h); bad != nil {
			s.cfg.Logger.Info("process handshake refused", "remote", r.RemoteAddr, "err", bad)
			http.Error(w, bad.Error(), http.StatusBadRequest)
			return
		}
		s.open(h.Process)
		err = s.cfg.Auth.Authenticate(r.Context(), h)
		if err != nil {
			s.abandoned(h.Process, false)
		}
		if err != nil && s.cfg.Refuse != nil && s.cfg.Refuse(w, r, err) {
			return
		}
	}
	if err != nil {
		s.cfg.Logger.Info("process handshake refused", "remote", r.RemoteAddr, "err", err)
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	// Processes authenticate with the token in the query, never with
	// cookies, so the browser origin check protects nothing here.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept answered the process (its WebSocket headers are wrong).
		s.cfg.Logger.Info("process handshake refused", "remote", r.RemoteAddr, "process", h.PID, "err", err)
		s.abandoned(h.Process, true)
		return
	}
	c.SetReadLimit(s.cfg.MaxFrameBytes)
	s.serve(h, wsConn{c}, true)
}

// abandoned ends an opening that attached no connection (abandon), and
// records the process disconnected when it must be.
func (s *Server) abandoned(p Process, recorded bool) {
	if s.abandon(p, recorded) {
		s.callback(func(ctx context.Context) { s.cfg.Backend.ProcessDisconnected(ctx, p) })
	}
}

// Serve runs the protocol over c for the process of h until c closes or
// the Server is closed; it returns when the connection's goroutines have
// ended. ServeHTTP calls it after the upgrade; tests call it with a Pipe.
func (s *Server) Serve(h *Handshake, c Conn) { s.serve(h, c, false) }

// serve is Serve, ending an opening of h's process (open) when opened.
func (s *Server) serve(h *Handshake, c Conn, opened bool) {
	sess, ok := s.attach(h, c, opened)
	if !ok {
		s.cfg.Logger.Info("process connection closed at once: the endpoint is shutting down", "remote", h.RemoteAddr, "process", h.PID)
		c.Close(CloseServiceRestart, "service shutting down")
		return
	}
	defer s.wg.Done()
	s.callback(func(ctx context.Context) { s.cfg.Backend.ProcessConnected(ctx, h) })
	sess.run()
	if s.detach(sess) {
		s.callback(func(ctx context.Context) { s.cfg.Backend.ProcessDisconnected(ctx, h.Process) })
	}
}

// callback runs a lifecycle callback under its own deadline, detached from
// the Server's context so that it also runs during Close.
func (s *Server) callback(f func(context.Context)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), s.cfg.RequestTimeout)
	defer cancel()
	f(ctx)
}

// Close ends every connection with close code 1012 (the SDKs reconnect,
// to another node if this one is gone) and waits until all have ended.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	var all []*session
	for _, p := range s.procs {
		all = append(all, p.conns...)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range all {
		c.kill(CloseServiceRestart, "service shutting down")
	}
	s.wg.Wait()
	return nil
}
