// Package control is Anylift's application layer: one method per GameLift
// operation, each run as one store transaction, plus the background loops
// that move records along in time (reservation timeouts and the like).
// FlexMatch's operations and loop are internal/flexmatch's, the game
// session queues, their placements and the placer internal/queueing's,
// container fleets with their capacity and scaling internal/containers',
// the game and player session operations internal/sessions', the compute
// operations and auth tokens internal/computes', server processes with
// their side of a game session internal/processes'; matchmaker.go,
// queueing.go, containers.go, sessions.go, computes.go and processes.go
// are the seams between control and each.
//
// Methods take and return wire shapes that the API layer has already
// decoded and validated against the model; they check the rules the model
// cannot express and answer *game.Error kinds.
package control

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
)

// Config holds the service's settings; zero values take the defaults below.
// Several are the node's, resolved here and given by internal/server to
// the services beside control that use them: the health, lost-process,
// refresh and reservation settings to the server processes
// (internal/processes), the token lifetime and SDK endpoint to the
// computes too.
type Config struct {
	Account game.Account
	// AuthTokenTTL is the lifetime of a compute auth token (15 min); the
	// computes are given it (internal/server), and a RefreshConnection is
	// claimed for as long.
	AuthTokenTTL time.Duration
	// ReservationTimeout is how long a RESERVED player session waits for
	// AcceptPlayerSession before it is TIMEDOUT (60 s).
	ReservationTimeout time.Duration
	// MaxPlayersPerSession caps MaximumPlayerSessionCount (200); the
	// game sessions and the queues are given it (internal/server).
	MaxPlayersPerSession int
	// UnhealthyTimeout is how long an ACTIVE process may go without a
	// healthy report before it is ended as unhealthy (3 min). An unhealthy
	// report does not reset the clock.
	UnhealthyTimeout time.Duration
	// HealthCheckInterval is the older way to set it: when UnhealthyTimeout
	// is zero and this is not, the timeout is three intervals.
	HealthCheckInterval time.Duration
	// ProcessLostGrace is how long a process whose connection dropped
	// without ProcessEnding may take to reconnect before it is lost (30 s).
	ProcessLostGrace time.Duration
	// RefreshMargin is how long before its auth token expires a process
	// connection is renewed with RefreshConnection (2 min).
	RefreshMargin time.Duration
	// SDKEndpoint is the WebSocket URL game servers' SDKs connect to,
	// returned as a compute's GameLiftServiceSdkEndpoint by the computes,
	// which are given it (ws://127.0.0.1:9870).
	SDKEndpoint string
	// SDKEndpointPublic says SDKEndpoint was configured (a load balancer,
	// a public name) rather than derived from the listener: then every
	// RefreshConnection sends processes there. Otherwise each process is
	// sent back to the URL it connected through, TLS or not.
	SDKEndpointPublic bool
	// NodeID names this node in the store (a random id when empty);
	// NodeAddress is the base URL of its internal forwarding listener
	// (empty: none). A node whose heartbeat is NodeTTL old by the
	// database's clock is dead (10 s).
	NodeID, NodeAddress string
	NodeTTL             time.Duration
	// FaultInjection turns on InjectFault (faults.go): off unless asked
	// for ("anylift dev" asks; "anylift serve" with --allow-fault-injection).
	FaultInjection bool
	// ManualTimers leaves the timers to Sweep: the background loop does
	// not run them at each tick (tests that move a clock by hand and run
	// the timers themselves, so that no sweep lands between two of their
	// steps). The heartbeat, fleet assignment, placer and scaler loops run
	// as ever.
	ManualTimers bool
}

func (c *Config) defaults() {
	c.Account = c.Account.OrDefaults()
	if c.AuthTokenTTL == 0 {
		c.AuthTokenTTL = 15 * time.Minute
	}
	if c.ReservationTimeout == 0 {
		c.ReservationTimeout = 60 * time.Second
	}
	if c.MaxPlayersPerSession == 0 {
		c.MaxPlayersPerSession = 200
	}
	if c.UnhealthyTimeout == 0 {
		c.UnhealthyTimeout = 3 * time.Minute
		if c.HealthCheckInterval > 0 {
			c.UnhealthyTimeout = 3 * c.HealthCheckInterval
		}
	}
	if c.ProcessLostGrace == 0 {
		c.ProcessLostGrace = 30 * time.Second
	}
	if c.RefreshMargin == 0 {
		c.RefreshMargin = 2 * time.Minute
	}
	if c.NodeID == "" {
		c.NodeID = "node-" + game.NewUUID()
	}
	if c.NodeTTL == 0 {
		c.NodeTTL = 10 * time.Second
	}
	if c.SDKEndpoint == "" {
		c.SDKEndpoint = "ws://127.0.0.1:9870"
	}
}

// Service implements the control-plane operations.
type Service struct {
	store store.Store
	cfg   Config
	now   func() time.Time
	log   *slog.Logger
	// timers are the background sweeps, apart from the heartbeat (run.go).
	timers []func(context.Context) error
	// queues are the game session queues and their placer; nil until
	// SetQueues (queueing.go).
	queues Queues
	// node is this node's heartbeat and draining state (nodes.go).
	node nodeState
	// matchmaker is FlexMatch; nil until SetMatchmaker (matchmaker.go).
	matchmaker Matchmaker
	// fx is fault injection's state; nil when it is off (faults.go).
	fx *faultState
	// owners is this node's view of fleet ownership; nil when the node
	// does not take part in it (owners.go).
	owners *owners.Map
	// ownerWake wakes the placer of another fleet's owner (owners.go).
	ownerWake func(fleetID string, leases bool)
	// assignWake runs AssignFleets before the next tick (owners.go).
	assignWake chan struct{}
	// taken: when this node took over each fleet from a dead node
	// (owners.go, takeoverTenure).
	takenMu sync.Mutex
	taken   map[string]time.Time
	// containers are container fleets, their capacity and its scaler;
	// nil until SetContainers (containers.go).
	containers Containers
	// computes are the computes and their auth tokens; nil until
	// SetComputes (computes.go).
	computes Computes
	// procs are the server processes with their side of a session; nil
	// until SetProcesses (processes.go).
	procs Processes
	// conns is the process endpoint, which DROP_CONNECTION cuts; nil
	// until SetConnections (faults.go).
	conns Connections
}

// New returns a Service over st. now is the clock (time.Now when nil).
func New(st store.Store, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	svc := &Service{store: st, cfg: cfg, now: now, log: log}
	if cfg.FaultInjection {
		svc.fx = newFaultState()
	}
	svc.timers = svc.sweeps()
	svc.node.started = svc.clock()
	return svc
}

// Config returns the settings in effect, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

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
