// Package processes holds the server processes of every fleet and what a
// process does to its game session: a process's connection, activation
// and health reports (the server SDK's calls, carried by the process
// endpoint), ActivateGameSession, AcceptPlayerSession and
// RemovePlayerSession, a game session's end however it comes (its process
// ends or is lost, its activation times out, its compute or fleet goes),
// what a process is sent about its session (start, update, terminate), the
// agents' reports, which node holds a process's connection and what
// becomes of a process whose node dies, and the timers of all these (lost
// processes, unhealthy ones, connections to refresh, activation and
// reservation timeouts, orphaned and stranded processes, holdings).
//
// It runs over the store, each operation one transaction of processes,
// game sessions and player sessions. What it needs of the rest of the
// control plane it asks of the package that holds it: a fleet event
// through Control and fault injection's hooks through Faults, which
// internal/control's Service implements; the placer's wake and the
// placement hooks of a session's activation and end through Queues
// (internal/queueing); a compute's token or its removal through Computes
// (internal/computes). Control in turn reaches it through
// control.Processes (the process timers among the sweeps, a deleted
// fleet's sessions ended, a new session's start pushed, a TERMINATE_PROCESS
// fault's processes ended); the sessions, the queues, FlexMatch, the
// container fleets and the computes through seams of their own. None of
// these packages imports another; internal/server wires them together.
package processes

import (
	"context"
	"log/slog"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Control is what server processes need of the rest of the control
// plane. Methods taking a transaction run inside it.
type Control interface {
	// RecordEvent adds a fleet event at now; resourceID empty means the
	// fleet.
	RecordEvent(tx store.Tx, fleetID, resourceID, code, message string) error
}

// Queues is what server processes need of the game session queues
// (internal/queueing implements it). Methods taking a transaction run
// inside it.
type Queues interface {
	// WakePlacer tells the placer a process can take a game session now.
	WakePlacer()
	// SessionActivated is called in the transaction in which gs becomes
	// ACTIVE: the queue placement that made it, if any, is fulfilled.
	SessionActivated(tx store.Tx, gs *game.GameSession) error
	// SessionEnded is called in the transaction in which gs ends while
	// ACTIVATING: its placement, if any, is placed again or fails.
	SessionEnded(tx store.Tx, gs *game.GameSession) error
}

// Computes is what server processes need of the computes
// (internal/computes implements it). Methods taking a transaction run
// inside it.
type Computes interface {
	// MintAuthToken mints and stores an auth token for a registered
	// compute, for a RefreshConnection; the result carries the secret.
	MintAuthToken(ctx context.Context, fleetID, name string) (*game.AuthToken, error)
	// Deregister deletes a compute with its auth tokens, a container
	// group's once its processes are ended (its sessions end through
	// EndComputeSessions): NotFound when it is not there.
	Deregister(tx store.Tx, fleetID, name string) error
}

// Config holds the service's settings; zero values take the defaults
// below, which are control's for the settings of the same name.
type Config struct {
	// NodeID names this node in the store; a node whose heartbeat is
	// NodeTTL old by the database's clock is dead (10 s).
	NodeID  string
	NodeTTL time.Duration
	// AuthTokenTTL is the lifetime of a compute auth token (15 min): a
	// RefreshConnection is claimed for as long.
	AuthTokenTTL time.Duration
	// ReservationTimeout is how long a RESERVED player session waits for
	// AcceptPlayerSession before it is TIMEDOUT (60 s).
	ReservationTimeout time.Duration
	// UnhealthyTimeout is how long an ACTIVE process may go without a
	// healthy report before it is ended as unhealthy (3 min).
	UnhealthyTimeout time.Duration
	// ProcessLostGrace is how long a process whose connection dropped
	// without ProcessEnding may take to reconnect before it is lost (30 s).
	ProcessLostGrace time.Duration
	// RefreshMargin is how long before its auth token expires a process
	// connection is renewed with RefreshConnection (2 min).
	RefreshMargin time.Duration
	// SDKEndpoint is the WebSocket URL game servers' SDKs connect to
	// (ws://127.0.0.1:9870); SDKEndpointPublic says it was configured (a
	// load balancer, a public name): then every RefreshConnection sends
	// processes there, and otherwise each back to the URL it connected
	// through.
	SDKEndpoint       string
	SDKEndpointPublic bool
}

func (c *Config) defaults() {
	if c.NodeID == "" {
		c.NodeID = "node-" + game.NewUUID()
	}
	if c.NodeTTL == 0 {
		c.NodeTTL = 10 * time.Second
	}
	if c.AuthTokenTTL == 0 {
		c.AuthTokenTTL = 15 * time.Minute
	}
	if c.ReservationTimeout == 0 {
		c.ReservationTimeout = 60 * time.Second
	}
	if c.UnhealthyTimeout == 0 {
		c.UnhealthyTimeout = 3 * time.Minute
	}
	if c.ProcessLostGrace == 0 {
		c.ProcessLostGrace = 30 * time.Second
	}
	if c.RefreshMargin == 0 {
		c.RefreshMargin = 2 * time.Minute
	}
	if c.SDKEndpoint == "" {
		c.SDKEndpoint = "ws://127.0.0.1:9870"
	}
}

// Service implements what server processes do and what is done to them.
type Service struct {
	store store.Store
	ctl   Control
	cfg   Config
	now   func() time.Time
	log   *slog.Logger
	// pusher reaches connected server processes; nil until SetPusher.
	pusher Pusher
	// hosts answers which process hosts which session when set (hosts.go).
	hosts Hosts
	// computes mints tokens and deregisters computes; nil until
	// SetComputes.
	computes Computes
	// queues hears of a free process and of a placed session's
	// activation or end; nil until SetQueues.
	queues Queues
	// faults says whether an injected fault acts on a health report or a
	// start; nil until SetFaults (faults.go).
	faults Faults
	// stale is when the process timer next needs to read the store
	// (processtimers.go).
	stale staleGate
}

// New returns the server process service over st, asking ctl for the
// rest of the control plane. now is the clock (time.Now when nil): the
// one ctl runs on.
func New(st store.Store, ctl Control, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, ctl: ctl, cfg: cfg, now: now, log: log}
}

// SetQueues makes a process that can take a game session wake q's
// placer, and a session's activation or end while ACTIVATING reach q's
// placement. Call it before the service serves requests; without it no
// placement hears of its session.
func (s *Service) SetQueues(q Queues) { s.queues = q }

func (s *Service) wakePlacer() {
	if s.queues != nil {
		s.queues.WakePlacer()
	}
}

func (s *Service) placementActivated(tx store.Tx, gs *game.GameSession) error {
	if s.queues == nil {
		return nil
	}
	return s.queues.SessionActivated(tx, gs)
}

func (s *Service) placementEnded(tx store.Tx, gs *game.GameSession) error {
	if s.queues == nil {
		return nil
	}
	return s.queues.SessionEnded(tx, gs)
}

// SetComputes makes a RefreshConnection's token and a container group's
// compute removal go through c. Call it before the service serves
// requests and before its timers run.
func (s *Service) SetComputes(c Computes) { s.computes = c }

func (s *Service) mintAuthToken(ctx context.Context, fleetID, name string) (*game.AuthToken, error) {
	if s.computes == nil {
		return nil, game.Errorf(game.Internal, "compute %s: no compute service is set", name)
	}
	return s.computes.MintAuthToken(ctx, fleetID, name)
}

func (s *Service) deregister(tx store.Tx, fleetID, name string) error {
	if s.computes == nil {
		return game.Errorf(game.Internal, "compute %s: no compute service is set", name)
	}
	return s.computes.Deregister(tx, fleetID, name)
}

// clock returns the current time, truncated to the millisecond precision
// that timestamps have on the wire and in the store.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// update and view run fn in a transaction.
func (s *Service) update(ctx context.Context, fn func(store.Tx) error) error {
	return s.store.Update(ctx, fn)
}

func (s *Service) view(ctx context.Context, fn func(store.Tx) error) error {
	return s.store.View(ctx, fn)
}
