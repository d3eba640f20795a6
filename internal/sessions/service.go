// Package sessions holds game sessions and their player sessions: the
// game session operations (CreateGameSession, DescribeGameSessions and
// DescribeGameSessionDetails, UpdateGameSession, TerminateGameSession,
// SearchGameSessions), a placement's game session created on a claimed
// process, the player session operations (CreatePlayerSession(s),
// DescribePlayerSessions), the seats decided in memory where the memory
// decides them, the reads answered from the live sessions in memory, and
// the answers kept encoded there.
//
// It runs over the store, each operation one transaction of game and
// player sessions. What it needs of the rest of the control plane (the
// fleet an operation names, fault injection's refusal of a new session, a
// new session sent to its process and its demand told to the scaler) it
// asks through Control, which internal/control's Service implements, and
// a session's process asked to end through Processes (internal/processes). The queues have a placement's
// session created here and a timed-out placement's session abandoned
// (queueing.Sessions); control asks nothing of it. A session's end,
// however it comes, what its process is sent and what the process does to
// its player sessions (accept, remove), with the reservation timer, are
// internal/processes'. None of these packages imports another;
// internal/server wires them together.
//
// Methods take and return wire shapes that the API layer has already
// decoded and validated against the model; they check the rules the model
// cannot express and answer *game.Error kinds.
package sessions

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Control is what game sessions need of the rest of the control plane.
// Methods taking a transaction run inside it.
type Control interface {
	// FleetFor returns the fleet an operation names by fleet id or ARN,
	// or by alias id or ARN, exactly one of them: InvalidRequest,
	// NotFound or TerminalRoutingStrategy otherwise.
	FleetFor(tx store.Tx, fleetIDOrARN, aliasIDOrARN string) (*game.Fleet, error)
	// AliasFleet returns the fleet a SIMPLE alias points to: NotFound or
	// TerminalRoutingStrategy otherwise.
	AliasFleet(tx store.Tx, aliasIDOrARN string) (string, error)
	// FaultKey names one call for fault injection (empty when faults are
	// off), so that a transaction run again uses no more of a fault.
	FaultKey() string
	// RefuseSession is FleetCapacityExceeded when an injected fault
	// refuses the call named key a new session on fleetID's location.
	RefuseSession(fleetID, location, key string) error
	// SessionCreated sends a session CreateGameSession made on proc to
	// it and tells the scaler of the demand; called after it commits.
	SessionCreated(gs *game.GameSession, proc *game.Process)
	// SessionDemand tells the scaler a session found no free process on
	// fleetID.
	SessionDemand(fleetID string)
}

// Processes is what game sessions need of the server processes
// (internal/processes implements it).
type Processes interface {
	// PushTerminate asks the process hosting gs to end; a session whose
	// process cannot be reached ends at once. Called after the change
	// commits.
	PushTerminate(ctx context.Context, gs *game.GameSession)
}

// Config holds the service's settings; zero values take the defaults
// below, which are control's for the settings of the same name.
type Config struct {
	// Account names the Region and account of every ARN made.
	Account game.Account
	// ReservationTimeout is how long a RESERVED player session holds its
	// seat before it is TIMEDOUT (60 s): reservations older are not
	// counted against a session's seats.
	ReservationTimeout time.Duration
	// MaxPlayersPerSession caps MaximumPlayerSessionCount (200).
	MaxPlayersPerSession int
	// SearchPageSize caps SearchGameSessions results per page (20).
	SearchPageSize int
}

func (c *Config) defaults() {
	c.Account = c.Account.OrDefaults()
	if c.ReservationTimeout == 0 {
		c.ReservationTimeout = 60 * time.Second
	}
	if c.MaxPlayersPerSession == 0 {
		c.MaxPlayersPerSession = 200
	}
	if c.SearchPageSize == 0 {
		c.SearchPageSize = 20
	}
}

// Service implements the game session and player session operations.
type Service struct {
	store store.Store
	ctl   Control
	cfg   Config
	now   func() time.Time
	// live answers session reads from memory when set (live.go).
	live LiveSessions
	// procs reach a session's server process; nil until SetProcesses.
	procs Processes
}

// SetProcesses makes TerminateGameSession ask the session's process to
// end through p. Call it before the service serves requests.
func (s *Service) SetProcesses(p Processes) { s.procs = p }

func (s *Service) pushTerminate(ctx context.Context, gs *game.GameSession) {
	if s.procs != nil {
		s.procs.PushTerminate(ctx, gs)
	}
}

// New returns the game session service over st, asking ctl for the rest
// of the control plane. now is the clock (time.Now when nil): the one ctl
// runs on.
func New(st store.Store, ctl Control, cfg Config, now func() time.Time) *Service {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, ctl: ctl, cfg: cfg, now: now}
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
