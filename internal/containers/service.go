// Package containers holds container fleets with their capacity and its
// scaling: the container group definition operations (what a container
// fleet runs on each instance), the container fleet operations, a
// container fleet's desired capacity (UpdateFleetCapacity) and its
// capacity as DescribeFleetCapacity shows it, the scaling policies,
// Start/StopFleetActions, the scaler that moves the desired capacity,
// and what whatever runs the fleets (internal/kube) asks: what each fleet
// is to run, its game server container groups registered, running,
// stopped and removed, and a signal when a desired capacity changes.
// Scaling lives here because only container fleets have a capacity
// Anylift can change: an Anywhere fleet's is whatever registers.
//
// It runs over the store, each operation one transaction of its own
// records (container group definitions, scaling policies, a container
// fleet's attributes and capacity). What a group's removal does to its
// server processes it asks of them (Processes, which internal/processes
// implements), a group's compute deregistered and its token of the
// computes (Computes, internal/computes). What it needs of the rest of
// the control plane (a fleet event, a fleet inserted or deleted as any
// fleet is, the protection policy's change, fleet ownership) it asks
// through Control, which internal/control's Service implements; control
// in turn runs the scaler, tells it of a session's demand and asks it a
// container fleet's capacity (control.Containers). None of these packages
// imports another; internal/server wires them together.
package containers

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Control is what container fleets need of the rest of the control
// plane. Methods taking a transaction run inside it.
type Control interface {
	// RecordEvent adds a fleet event; resourceID empty means the fleet.
	RecordEvent(tx store.Tx, fleetID, resourceID, code, message string) error
	// InsertFleet writes a new fleet with its tags and the event of its
	// creation.
	InsertFleet(tx store.Tx, f *game.Fleet, tags []wire.Tag) error
	// RemoveFleet deletes a fleet as DeleteFleet does.
	RemoveFleet(tx store.Tx, f *game.Fleet) error
	// ProtectionChanged records the protection policy's change from old.
	ProtectionChanged(tx store.Tx, f *game.Fleet, old string) error
	// Owns reports whether this node acts for fleetID.
	Owns(fleetID string) bool
}

// Processes is what container fleets need of the server processes
// (internal/processes implements it): what the removal of a game server
// container group does to the processes it runs. Methods taking a
// transaction run inside it.
type Processes interface {
	// EndCompute ends what is left of a compute's server processes and
	// their sessions (TERMINATED, INTERRUPTED) and deregisters it; it
	// returns the processes ended.
	EndCompute(tx store.Tx, fleetID, name string) ([]*game.Process, error)
	// ProcessesEnded closes what connections are left of processes
	// EndCompute or FinishCompute ended; called after the change commits.
	ProcessesEnded(ended []*game.Process)
	// TerminateCompute starts ending a compute's server processes: a
	// game session one hosts goes TERMINATING (INTERRUPTED) until its
	// process ends, a process hosting none ends at once. It returns the
	// processes to tell (TellTerminate, after the change commits).
	TerminateCompute(tx store.Tx, fleetID, name string) ([]*game.Process, error)
	// TellTerminate sends each process TerminateProcess with its
	// termination time at (onProcessTerminate); no more than a try: a
	// process away now is told again when it reconnects.
	TellTerminate(procs []*game.Process, at time.Time)
	// FinishCompute ends a terminating compute c once none of its server
	// processes is connected and hosting a live game session, or at once
	// when force says its time is up: a process still hosting one then
	// ends with SERVER_PROCESS_FORCE_TERMINATED, one gone without
	// ProcessEnding with SERVER_PROCESS_CRASHED, and their sessions with
	// them (TERMINATED); c is deregistered. done says whether it was; it
	// returns the processes ended (ProcessesEnded).
	FinishCompute(tx store.Tx, c *game.Compute, force bool) (ended []*game.Process, done bool, err error)
	// ComputeSettled reports, reading inside tx, whether FinishCompute
	// would end terminating compute c without force.
	ComputeSettled(tx store.Tx, c *game.Compute) (bool, error)
}

// Computes is what container fleets need of the computes
// (internal/computes implements it): a group's compute deregistered, and
// the auth token a group's processes connect with.
type Computes interface {
	// Deregister ends a compute's game sessions and deletes it with its
	// auth tokens inside tx: NotFound when it is not there.
	Deregister(tx store.Tx, fleetID, name string) error
	// NewToken mints a compute auth token without storing it: the
	// secret, and the hash it is stored under.
	NewToken() (secret, hash string)
}

// Config holds the service's settings; zero values take the defaults.
type Config struct {
	// Account names the Region and account of every ARN shown; container
	// fleets run in its Region.
	Account game.Account
	// ScaleDownDelay is how long a target-based scaling policy must find
	// its fleet needing fewer instances before it lowers the desired
	// capacity, and how long after its last change (5 min; scaler.go).
	ScaleDownDelay time.Duration
	// TerminationWait is how long a game server container group that a
	// scale-down removes while it hosts game sessions gives its server
	// processes, from onProcessTerminate, to end them (ProcessEnding)
	// before it is stopped regardless: 5 minutes, as GameLift gives.
	TerminationWait time.Duration
}

// Service implements the container fleet, container group definition and
// scaling operations and the scaler.
type Service struct {
	store    store.Store
	ctl      Control
	procs    Processes
	computes Computes
	cfg      Config
	now      func() time.Time
	log      *slog.Logger
	// scaler is the scaling policies' state on this node (scaler.go).
	scaler *scaler
}

// New returns the container fleet service over st, asking procs what a
// group's removal does to its processes, computes for its compute and
// token, and ctl for the rest of the control plane. now is the clock
// (time.Now when nil): the one ctl runs on.
func New(st store.Store, ctl Control, procs Processes, computes Computes, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	if cfg.ScaleDownDelay == 0 {
		cfg.ScaleDownDelay = defaultScaleDownDelay
	}
	if cfg.TerminationWait == 0 {
		cfg.TerminationWait = DefaultTerminationWait
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, ctl: ctl, procs: procs, computes: computes, cfg: cfg, now: now, log: log, scaler: newScaler()}
}

// DefaultTerminationWait is Config.TerminationWait's default: GameLift
// waits five minutes for ProcessEnding after onProcessTerminate.
const DefaultTerminationWait = 5 * time.Minute

// tick is how often the scaler looks at every scaled fleet: control's
// tick.
const tick = time.Second

// defaultMetricGroup is the metric group of a fleet created without one.
const defaultMetricGroup = "default"

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

func (s *Service) logSweep(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		s.log.Warn("sweep failed", "err", err)
	}
}

// protection is a session's protection policy, NoProtection when unset.
func protection(p string) string {
	if p == "" {
		return game.NoProtection
	}
	return p
}

// containsString reports whether list holds v, case aside (as control's
// location checks do).
func containsString(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}
