// Package flexmatch is the FlexMatch service: the matchmaking operations
// (rule sets, configurations, tickets, acceptance, backfill, the server
// SDK's backfill calls) and the matchmaker loop that moves tickets along
// (time-outs, the pool, proposals, a match's placement, backfill into a
// running session, matches sent to the node owning a session's fleet).
//
// It runs over the store, each operation one transaction of its own
// records, and decides matches with internal/matchmaking, the pure
// matcher. What it needs of the rest of the control plane (the outbox,
// seats in a game session) it asks through Control, which
// internal/control's Service implements; a session's update pushed to its
// server process through Processes (internal/processes); a match's
// placement it starts and cancels through Queues, which
// internal/queueing's Service implements. Control in turn runs the
// matchmaker's step among its sweeps (control.Matchmaker), and the queues
// tell it when a match's placement ends (queueing.Matchmaker). None of
// these packages imports another; internal/server wires them together.
package flexmatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
)

// Control is what FlexMatch needs of the rest of the control plane.
// Methods taking a transaction run inside it.
type Control interface {
	// PublishMatchmakingEvent appends a matchmaking event of type typ to
	// the outbox; resource is the configuration's ARN, target its
	// NotificationTarget.
	PublishMatchmakingEvent(tx store.Tx, typ, resource, target string, detail any) error
	// ReserveMatchSeats reserves a seat in a game session for each
	// player, all or none, at now; a *game.Error says the session cannot
	// take them.
	ReserveMatchSeats(tx store.Tx, gameSessionID string, playerIDs []string, now time.Time) ([]*game.PlayerSession, error)
}

// Processes is what FlexMatch needs of the server processes
// (internal/processes implements it).
type Processes interface {
	// PushSessionUpdate tells the process hosting gs that its session
	// changed for reason; called after the change commits.
	PushSessionUpdate(gs *game.GameSession, reason, backfillTicketID string)
}

// Queues is what FlexMatch needs of the game session queues
// (internal/queueing) to place a match. Methods taking a transaction run
// inside it.
type Queues interface {
	// StartMatchPlacement inserts p, a PENDING placement of a match on
	// queue q, its deadline the queue's timeout after p.StartTime.
	StartMatchPlacement(tx store.Tx, q *game.Queue, p *game.Placement) error
	// CancelPlacement ends PENDING placement p CANCELLED; its end comes
	// back through PlacementEnded in the same transaction.
	CancelPlacement(tx store.Tx, p *game.Placement) error
	// WakePlacer asks the placer to look for placements to place.
	WakePlacer()
}

// Config holds the service's settings.
type Config struct {
	// Account names the Region and account of every ARN shown.
	Account game.Account
}

// Service implements the FlexMatch operations and the matchmaker loop.
type Service struct {
	store  store.Store
	ctl    Control
	queues Queues
	cfg    Config
	now    func() time.Time
	log    *slog.Logger
	// mmOwner names this node in matchmaker leases (loop.go).
	mmOwner string
	// owners is this node's view of fleet ownership and fleetMatch sends
	// the matchmaking of another node's game session to that node; both
	// nil unless the node takes part in fleet ownership (remote.go).
	owners     *owners.Map
	fleetMatch func(ctx context.Context, base string, call *FleetMatchCall) error
	// procs reach a session's server process; nil until SetProcesses.
	procs Processes
}

// SetProcesses makes a backfill's outcome reach the session's server
// process through p. Call it before the service serves requests; without
// it no process hears of it.
func (s *Service) SetProcesses(p Processes) { s.procs = p }

func (s *Service) pushSessionUpdate(gs *game.GameSession, reason, backfillTicketID string) {
	if s.procs != nil {
		s.procs.PushSessionUpdate(gs, reason, backfillTicketID)
	}
}

// New returns the FlexMatch service over st, asking ctl for the rest of
// the control plane and queues for a match's placement. now is the clock
// (time.Now when nil): the one ctl runs on.
func New(st store.Store, ctl Control, queues Queues, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, ctl: ctl, queues: queues, cfg: cfg, now: now, log: log, mmOwner: game.NewUUID()}
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
