// Package server assembles Anylift's service: it opens the store, builds
// the application and its HTTP front doors, listens, and shuts all of it
// down in order. cmd/anylift and the tests start it the same way.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/gateway"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/wire"
)

// Config is everything the service needs; cmd/anylift fills it from flags,
// the environment and a config file.
type Config struct {
	Listen    string // host:port of the API listener (127.0.0.1:9870)
	DataDir   string // the embedded store's directory
	Store     string // empty: SQLite in DataDir; postgres://...: PostgreSQL
	Region    string
	AccountID string
	// Credentials maps access key ids to secret keys accepted by SigV4,
	// with every right.
	Credentials map[string]string
	// CredentialsFile names a file of more keys, each with an optional
	// policy and rate (access.ReadCredentials), re-read when it or a
	// policy file changes. It must be usable at start.
	CredentialsFile string
	// RateLimit limits each access key's API requests once their
	// signature is verified (a key's line in CredentialsFile may set its
	// own); a PerSecond of 0 limits nothing.
	RateLimit access.Rate
	// AnyCredentials accepts any well-formed signature. Local use only.
	AnyCredentials bool
	// AnySigningRegion accepts signatures scoped to any region; without
	// it only Region (GameLift's rule), whose ARNs the service writes.
	AnySigningRegion bool
	// AcceptExpiredAuthTokens keeps compute auth tokens valid past their
	// expiry ("anylift dev"); RefusedProcessHint, when set, is logged as a
	// warning with every refused process handshake, saying what to do.
	AcceptExpiredAuthTokens bool
	RefusedProcessHint      string
	// SQLiteSynchronous is FULL (default) or NORMAL.
	SQLiteSynchronous string

	AuthTokenTTL         time.Duration
	ReservationTimeout   time.Duration
	MaxPlayersPerSession int
	// SDKEndpoint is the WebSocket URL advertised to game servers as
	// GameLiftServiceSdkEndpoint; ws://<API listener address> when empty.
	SDKEndpoint string
	// AgentEndpoint is advertised to agents as GameLiftAgentEndpoint;
	// http://<API listener address> when empty.
	AgentEndpoint string
	// TLSListen is the address of the process endpoint's TLS listener
	// (empty: none); TLSCert and TLSKey name its certificate, generated
	// into DataDir when empty.
	TLSListen, TLSCert, TLSKey string
	// UnhealthyTimeout, HealthCheckInterval (its older form: three
	// intervals) and ProcessLostGrace tune the process timers.
	UnhealthyTimeout, HealthCheckInterval, ProcessLostGrace time.Duration
	// SearchPageSize caps SearchGameSessions results per page (20).
	SearchPageSize int
	// Events tunes the event stream and webhooks (secret, retries,
	// retention); Auth and the clock are filled in by Start.
	Events events.Config
	// PlayerListen is the player gateway's address (empty: no gateway);
	// Player configures it.
	PlayerListen string
	Player       gateway.Config
	// MetricsRetention is how long the per-minute metric history is kept
	// (14 days when zero).
	MetricsRetention time.Duration

	// Several nodes on one PostgreSQL (docs/several-nodes.md): NodeListen
	// is the address of the internal listener other nodes forward pushes
	// to (empty: none), NodeAdvertise the host:port they reach it at
	// (NodeListen's address when empty), NodeSecret the secret every node
	// shares. NodeID names the node (random when empty); NodeTTL is how
	// old a heartbeat makes a node dead (10 s); DrainTimeout bounds the
	// hand-over of processes at shutdown (10 s).
	NodeListen, NodeAdvertise, NodeSecret, NodeID string
	NodeTTL, DrainTimeout                         time.Duration
	// FleetOwnership says whether the node takes part in fleet ownership
	// on PostgreSQL (ownership.go): by default it does when it has a
	// forwarding listener (NodeListen), as every node beside others has.
	FleetOwnership Ownership

	// Limits bound every listener (limits.go); zero members take defaults.
	Limits Limits

	// Kube, when set, runs container fleets on a Kubernetes cluster.
	Kube *KubeConfig

	// AllowFaultInjection serves InjectFault (docs/fault-injection.md):
	// "anylift dev" sets it; "anylift serve" only with
	// --allow-fault-injection.
	AllowFaultInjection bool

	Log *slog.Logger
	Now func() time.Time // the clock; time.Now when nil
	// ManualTimers runs the service's timers only when Service().Sweep
	// is called, never on the background loop's tick: for tests that
	// drive Now by hand and sweep between their steps.
	ManualTimers bool
}

// Server is a running Anylift service.
type Server struct {
	cfg Config
	// owners is the node's view of fleet ownership; nil when it takes no
	// part (ownership.go).
	owners *owners.Map
	waking sync.Map // node base URL → a wake of its placer is on its way
	// warned holds the nodes checkPeers or watchPeers have warned of,
	// once each (peerWarning).
	warned map[string]bool
	// losing counts what runs for the fleets this node has just lost
	// (ownership.go); the store stays open until it is done.
	losing sync.WaitGroup
	// mem holds the fleets the node owns in memory (live.go).
	mem    *owned.Memory
	store  store.Store
	svc    *control.Service
	qs     *queueing.Service
	fm     *flexmatch.Service
	cs     *containers.Service
	ss     *sessions.Service
	cp     *computes.Service
	ps     *processes.Service
	api    *api.Handler
	events *events.Service
	hub    *sdkserver.Server
	obs    *observability
	ln     net.Listener
	tlsLn  net.Listener
	http   *http.Server
	procs  *endpoint
	// nodeLn and nodeHTTP serve other nodes' forwarded pushes and
	// relayed requests (cluster.go).
	nodeLn   net.Listener
	nodeHTTP *http.Server
	// router says which node owns each fleet (nil: everything is served
	// here); pipes are the process connections relayed to other nodes.
	router atomic.Pointer[cluster.Router]
	pipes  *pipes

	gateway    *gateway.Gateway
	playerLn   net.Listener
	playerHTTP *http.Server

	cancel context.CancelFunc
	wg     sync.WaitGroup

	// keys are the access keys accepted, with their rights.
	keys *access.Keyring

	// tlsCfg is the TLS side of the API port and the player gateway's.
	tlsCfg *tls.Config

	closeOnce sync.Once
	closeErr  error
	// limits bound every listener; limited maps each listener's name to
	// its *limitListener (limits.go).
	limits  Limits
	limited sync.Map
}

// Start opens the store, listens on cfg.Listen and serves in the
// background until Close.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	keys, err := access.NewKeyring(access.KeyringConfig{Fixed: cfg.Credentials, File: cfg.CredentialsFile,
		Known: Actions(), Log: cfg.Log, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	if keys.Keys().Len() == 0 && !cfg.AnyCredentials {
		return nil, errors.New("no credentials configured: pass --access-key and --secret-key, --credentials-file, or --insecure-any-credentials")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, cfg, st, keys)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// onPostgres reports whether cfg names a PostgreSQL store, which several
// nodes may share.
func onPostgres(cfg Config) bool {
	return strings.HasPrefix(cfg.Store, "postgres://") || strings.HasPrefix(cfg.Store, "postgresql://")
}

func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	if onPostgres(cfg) {
		db, err := postgres.Open(ctx, cfg.Store)
		if err != nil {
			return nil, err
		}
		if cfg.OwnsFleets() {
			// The node is the only writer of the fleets it owns: its
			// writes are committed in groups, as on SQLite.
			db.EnableGroupCommit()
		}
		return db, err
	}
	if cfg.Store != "" && cfg.Store != "sqlite" {
		return nil, fmt.Errorf("--store must be empty (SQLite in --data-dir) or a postgres:// URL")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("--data-dir is required for the embedded store")
	}
	return sqlite.Open(ctx, cfg.DataDir, sqlite.Options{Synchronous: cfg.SQLiteSynchronous})
}

func start(ctx context.Context, cfg Config, st store.Store, keys *access.Keyring) (*Server, error) {
	s := &Server{cfg: cfg, store: st, limits: cfg.Limits.withDefaults(), keys: keys, pipes: newPipes()}
	tlsCfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	var kc *kubeClient
	if cfg.Kube != nil {
		if kc, err = connectKube(cfg.Kube); err != nil {
			return nil, err
		}
	}
	ln, err := listen(cfg.Listen, "127.0.0.1:9870")
	if err != nil {
		return nil, err
	}
	// The cap counts at accept, under the TLS-or-plain sniffing; a
	// connection still being sniffed is idle, so it can be evicted.
	s.tlsCfg = tlsCfg
	s.ln = newDualListener(s.limit(ln, "API"), tlsCfg, s.limits.ReadHeaderTimeout)
	if cfg.TLSListen != "" {
		if s.tlsLn, err = listenAs("--tls-listen", cfg.TLSListen); err != nil {
			s.closeListeners()
			return nil, err
		}
		s.tlsLn = tls.NewListener(s.limit(s.tlsLn, "TLS"), tlsCfg)
	}
	s.procs = &endpoint{log: cfg.Log, hint: cfg.RefusedProcessHint}
	if err := s.listenNode(); err != nil {
		s.closeListeners()
		return nil, err
	}
	sdkEndpoint := cfg.SDKEndpoint
	if sdkEndpoint == "" {
		sdkEndpoint = "ws://" + s.ln.Addr().String()
	}
	agentEndpoint := cfg.AgentEndpoint
	if agentEndpoint == "" {
		agentEndpoint = "http://" + s.ln.Addr().String()
	}
	s.events = newEvents(cfg, st, keys)
	// The services write the outbox: the event stream wakes after any
	// commits an event.
	notifying := events.Notifying(st, s.events.Wake)
	s.svc = control.New(notifying, control.Config{
		Account:              game.Account{Region: cfg.Region, ID: cfg.AccountID},
		AuthTokenTTL:         cfg.AuthTokenTTL,
		ReservationTimeout:   cfg.ReservationTimeout,
		MaxPlayersPerSession: cfg.MaxPlayersPerSession,
		SDKEndpoint:          sdkEndpoint,
		SDKEndpointPublic:    cfg.SDKEndpoint != "",
		UnhealthyTimeout:     cfg.UnhealthyTimeout,
		HealthCheckInterval:  cfg.HealthCheckInterval,
		ProcessLostGrace:     cfg.ProcessLostGrace,
		NodeID:               cfg.NodeID,
		NodeAddress:          s.nodeAddress(),
		NodeTTL:              cfg.NodeTTL,
		FaultInjection:       cfg.AllowFaultInjection,
		ManualTimers:         cfg.ManualTimers,
	}, cfg.Now, cfg.Log)
	s.qs = queueing.New(notifying, s.svc, queueing.Config{Account: s.svc.Config().Account,
		MaxPlayersPerSession: s.svc.Config().MaxPlayersPerSession}, cfg.Now, cfg.Log)
	s.svc.SetQueues(s.qs)
	s.fm = flexmatch.New(notifying, s.svc, s.qs, flexmatch.Config{Account: s.svc.Config().Account}, cfg.Now, cfg.Log)
	s.svc.SetMatchmaker(s.fm)
	s.qs.SetMatchmaker(s.fm)
	s.ss = sessions.New(notifying, s.svc, sessions.Config{Account: s.svc.Config().Account,
		ReservationTimeout: s.svc.Config().ReservationTimeout, MaxPlayersPerSession: s.svc.Config().MaxPlayersPerSession,
		SearchPageSize: cfg.SearchPageSize}, cfg.Now)
	s.qs.SetSessions(s.ss)
	s.ps = processes.New(notifying, s.svc, processes.Config{NodeID: s.svc.NodeID(), NodeTTL: s.svc.Config().NodeTTL,
		AuthTokenTTL: s.svc.Config().AuthTokenTTL, ReservationTimeout: s.svc.Config().ReservationTimeout,
		UnhealthyTimeout: s.svc.Config().UnhealthyTimeout, ProcessLostGrace: s.svc.Config().ProcessLostGrace,
		RefreshMargin: s.svc.Config().RefreshMargin, SDKEndpoint: s.svc.Config().SDKEndpoint,
		SDKEndpointPublic: s.svc.Config().SDKEndpointPublic}, cfg.Now, cfg.Log)
	s.svc.SetProcesses(s.ps)
	s.ps.SetQueues(s.qs)
	s.ps.SetFaults(s.svc)
	s.ss.SetProcesses(s.ps)
	s.qs.SetProcesses(s.ps)
	s.fm.SetProcesses(s.ps)
	s.cp = computes.New(notifying, s.ps, computes.Config{Account: s.svc.Config().Account, AuthTokenTTL: s.svc.Config().AuthTokenTTL,
		AcceptExpiredTokens: cfg.AcceptExpiredAuthTokens, SDKEndpoint: s.svc.Config().SDKEndpoint, AgentEndpoint: agentEndpoint}, cfg.Now)
	s.svc.SetComputes(s.cp)
	s.ps.SetComputes(s.cp)
	s.cs = containers.New(notifying, s.svc, s.ps, s.cp, containers.Config{Account: s.svc.Config().Account}, cfg.Now, cfg.Log)
	s.svc.SetContainers(s.cs)
	if err := s.loadLive(ctx); err != nil {
		s.closeListeners()
		return nil, err
	}
	if cfg.AnyCredentials {
		cfg.Log.Warn("INSECURE: --insecure-any-credentials is set; any well-formed signature from any access key is accepted. Use this for local development only.")
	}
	procs := s.procs
	procs.svc, procs.ps, procs.cp, procs.qs, procs.fm = s.svc, s.ps, s.cp, s.qs, s.fm
	if cfg.NodeSecret != "" {
		procs.fwd = cluster.NewClient([]byte(cfg.NodeSecret), cfg.Now)
		procs.fwd.SetSelf(s.nodeAddress())
	}
	s.hub = sdkserver.New(sdkserver.Config{Auth: procs, Backend: procs, Logger: cfg.Log, Refuse: s.refuseHandshake})
	s.obs = newObservability(cfg, st, s.svc, s.ss, s.cp, s.qs, s.hub, keys)
	s.obs.exporter.AddListeners(s.listenerMetrics)
	var limiter *access.Limiter
	if cfg.RateLimit.PerSecond > 0 || cfg.CredentialsFile != "" {
		limiter = access.NewLimiter(cfg.RateLimit, cfg.Now)
	}
	var relay api.Relayer
	if procs.fwd != nil {
		relay = procs.fwd
	}
	s.api = api.New(s.svc, s.ss, s.qs, s.fm, s.cs, s.cp, s.ps, api.Options{
		Verifier: &api.Verifier{Keys: keys, AnyCredentials: cfg.AnyCredentials, Region: signingRegion(cfg), Now: cfg.Now},
		Log:      cfg.Log,
		Observe:  s.obs.exporter.Observe,
		Limiter:  limiter,
		Relay:    relay,

		UnauthenticatedBytes: s.limits.UnauthenticatedBodyBytes,
	})
	procs.hub = s.hub
	s.ps.SetPusher(procs)
	s.svc.SetConnections(procs)
	if err := s.startOwnership(); err != nil {
		s.closeListeners()
		return nil, err
	}
	if err := s.newGateway(); err != nil {
		s.closeListeners()
		return nil, err
	}
	s.serveNode()
	if err := s.checkPeers(ctx); err != nil {
		s.closeListeners()
		return nil, err
	}
	if err := s.svc.JoinCluster(ctx); err != nil {
		s.closeListeners()
		return nil, fmt.Errorf("registering this node in the store: %w", err)
	}
	s.http = newHTTPServer(s.routes(), api.MaxBodyBytes, s.limits, cfg.Log)
	s.http.RegisterOnShutdown(s.events.Shutdown)
	if err := s.startGateway(); err != nil {
		s.closeListeners()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.events.Run(runCtx)
	}()
	s.serve(s.ln, "API")
	if s.tlsLn != nil {
		s.serve(s.tlsLn, "TLS")
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.svc.Run(runCtx)
	}()
	s.obs.run(runCtx, &s.wg)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchPeers(runCtx)
	}()
	if kc != nil {
		s.runKube(runCtx, kc)
	}
	cfg.Log.Info("anylift serving", "listen", s.ln.Addr().String(), "tls", s.TLSAddr(), "store", storeName(cfg),
		"region", s.svc.Config().Account.Region, "player_gateway", s.PlayerAddr())
	return s, nil
}

// closeListeners closes the listeners opened so far, when start fails.
func (s *Server) closeListeners() {
	for _, ln := range []net.Listener{s.ln, s.tlsLn, s.nodeLn, s.playerLn} {
		if ln != nil {
			ln.Close()
		}
	}
}

func listen(addr, def string) (net.Listener, error) {
	if addr == "" {
		addr = def
	}
	return listenAs("--listen", addr)
}

// listenAs listens on addr for the flag named flag, saying what to do when
// the port is taken: most often by another anylift already running.
func listenAs(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s: the address is in use, most likely by another anylift already running; stop it, or give %s another port", flag, addr, flag)
	}
	return ln, err
}

// tlsConfig is the TLS side of the API listener and of the TLS listener
// (the C++ SDK, and so Unreal and O3DE, always speaks TLS), with
// --tls-cert/--tls-key or a self-signed certificate kept in the data
// directory. Given files are reloaded when they change (see
// sdkserver.ReloadingCertificate). TLS 1.2 stays allowed: it is all the
// C++ and C# SDKs offer.
func (s *Server) tlsConfig() (*tls.Config, error) {
	if s.cfg.TLSCert != "" && s.cfg.TLSKey != "" {
		r, err := sdkserver.NewReloadingCertificate(s.cfg.TLSCert, s.cfg.TLSKey, s.cfg.Log, s.cfg.Now)
		if err != nil {
			return nil, err
		}
		return &tls.Config{GetCertificate: r.GetCertificate, MinVersion: tls.VersionTLS12}, nil
	}
	host, _ := os.Hostname()
	cert, err := sdkserver.LoadCertificate(s.cfg.TLSCert, s.cfg.TLSKey, s.cfg.DataDir, host)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// serve runs the HTTP server on ln until Close.
func (s *Server) serve(ln net.Listener, name string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("listener stopped", "listener", name, "err", err)
		}
	}()
}

func storeName(cfg Config) string {
	if onPostgres(cfg) {
		return "postgres"
	}
	return "sqlite:" + cfg.DataDir
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", livez)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /events", longLived(s.events.Handler()))
	mux.HandleFunc("POST "+api.AgentReportPath, s.api.ServeAgentReport)
	mux.Handle(api.ExtensionPattern, s.gate(http.HandlerFunc(s.api.ServeExtension)))
	s.obs.mount(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if api.Match(r) {
			s.gate(s.api).ServeHTTP(w, r)
			return
		}
		if sdkserver.IsUpgrade(r) {
			s.gate(capUpgrades(http.HandlerFunc(s.processEndpoint))).ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
	return mux
}

// livez answers 200 whenever the server answers at all: a liveness probe
// that restarts a node only when it is stuck, never because its database
// is away (restarting would not bring it back) or because it drains.
func livez(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("alive\n"))
}

// healthz answers 200 while the node can read its database and is not
// draining.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.probe(w, r, false)
}

// readyz answers 200 only while the node takes traffic: what healthz
// checks, and also that its last heartbeat reached the store moments ago,
// the condition under which the API answers instead of refusing with 503.
// A load balancer's health check belongs here.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	s.probe(w, r, true)
}

func (s *Server) probe(w http.ResponseWriter, r *http.Request, ready bool) {
	if ready {
		if err := s.svc.StoreReachable(); err != nil {
			http.Error(w, "not ready: this node's heartbeat has not reached its database lately", http.StatusServiceUnavailable)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	// A real read: on PostgreSQL a bare BEGIN succeeds even when the
	// node's schema is gone.
	err := s.store.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetNode(s.svc.NodeID(), time.Minute)
		if game.IsKind(err, game.NotFound) {
			return nil // before the first heartbeat
		}
		return err
	})
	if err != nil {
		http.Error(w, "store unavailable: this node cannot reach its database", http.StatusServiceUnavailable)
		return
	}
	if s.svc.Draining() {
		http.Error(w, "draining", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ready {
		w.Write([]byte("ready\n"))
		return
	}
	w.Write([]byte("ok\n"))
}

// Addr is the API listener's address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// TLSAddr is the TLS listener's address, or "" when there is none.
func (s *Server) TLSAddr() string {
	if s.tlsLn == nil {
		return ""
	}
	return s.tlsLn.Addr().String()
}

// SDKEndpoint is the WebSocket URL given to game servers.
func (s *Server) SDKEndpoint() string { return s.svc.Config().SDKEndpoint }

// URL is the API's base URL, for --endpoint-url.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Service is the application, for tests and in-process tools.
func (s *Server) Service() *control.Service { return s.svc }

// Queues is the game session queues' service, for tests and in-process
// tools.
func (s *Server) Queues() *queueing.Service { return s.qs }

// FlexMatch is the FlexMatch service, for tests and in-process tools.
func (s *Server) FlexMatch() *flexmatch.Service { return s.fm }

// Containers is the container fleet service (container fleets, their
// capacity and scaling), for tests and in-process tools.
func (s *Server) Containers() *containers.Service { return s.cs }

// Sessions is the game and player session service, for tests and
// in-process tools.
func (s *Server) Sessions() *sessions.Service { return s.ss }

// Processes is the server process service (processes, their side of a
// game session, the holding of their connections), for tests and
// in-process tools.
func (s *Server) Processes() *processes.Service { return s.ps }

// Computes is the compute service (computes and their auth tokens), for
// tests and in-process tools.
func (s *Server) Computes() *computes.Service { return s.cp }

// Close stops accepting requests, lets those in flight finish (until ctx
// ends), stops the background loops and closes the store.
// Closing again does nothing and returns the first Close's result.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Server) close(ctx context.Context) error {
	drainCtx, cancelDrain := context.WithTimeout(ctx, s.drainTimeout())
	if s.owners != nil {
		// Fleets first: the processes drained next reconnect through
		// nodes that send them to the fleets' new owners.
		if err := s.svc.HandOffFleets(drainCtx); err != nil {
			s.cfg.Log.Warn("handing fleets to other nodes", "err", err)
		}
	}
	s.drain(drainCtx)
	cancelDrain()
	err := s.http.Shutdown(ctx)
	if s.playerHTTP != nil {
		if e := s.playerHTTP.Shutdown(ctx); err == nil {
			err = e
		}
	}
	s.pipes.close() // relayed processes see their connection end and reconnect
	s.hub.Close()   // processes see 1012 and reconnect elsewhere
	if s.nodeHTTP != nil {
		s.nodeHTTP.Shutdown(ctx)
	}
	s.cancel()
	s.wg.Wait()
	s.losing.Wait() // no fleet is lost once the loops have stopped
	if err := s.svc.LeaveCluster(ctx); err != nil {
		s.cfg.Log.Warn("removing this node from the store", "err", err)
	}
	if e := s.store.Close(); err == nil {
		err = e
	}
	return err
}

// Events is the event stream and webhook service.
func (s *Server) Events() *events.Service { return s.events }

// Store is the server's store, for tests that seed or inspect records.
func (s *Server) Store() store.Store { return s.store }

func (s *Server) drainTimeout() time.Duration {
	if s.cfg.DrainTimeout > 0 {
		return s.cfg.DrainTimeout
	}
	return 10 * time.Second
}

// Actions are the action names a policy may grant: every operation of
// the GameLift model (those Anylift does not serve answer as unsupported
// whatever the policy says).
func Actions() []string {
	out := make([]string, 0, len(wire.OperationErrors)+len(extapi.Operations))
	for op := range wire.OperationErrors {
		out = append(out, op)
	}
	out = append(out, extapi.Operations...) // Anylift's own
	sort.Strings(out)
	return out
}

// Keys are the access keys the server accepts, as they are now.
func (s *Server) Keys() *access.Keyring { return s.keys }

// signingRegion is the one region a request's credential scope may name,
// or "" for any.
func signingRegion(cfg Config) string {
	switch {
	case cfg.AnySigningRegion:
		return ""
	case cfg.Region == "":
		return "us-west-2" // the service's default region
	}
	return cfg.Region
}
