// Package queueing holds game session queues and their placements: the
// queue operations (create, describe, update, delete), the placement
// operations (start, describe, stop), the placer that turns PENDING
// placements into game sessions on free processes, the hooks that fulfil
// or fail a placement as its session activates or ends, the sweep that
// times placements out, and the placement events. A match's placement,
// which FlexMatch starts and cancels, is one of them.
//
// It runs over the store, each operation one transaction of its own
// records, and ranks candidates with internal/placement, the pure
// ranking. A placement's game session is made on a claimed free process,
// or abandoned when the placement times out, by the game sessions
// (Sessions, which internal/sessions implements). What it needs of the
// rest of the control plane (a placed session pushed to its process and
// its demand told to the scaler, an alias resolved, fleet ownership and
// the owner's wake, fault holds, seats, the outbox) it asks through
// Control, which
// internal/control's Service implements; control in turn runs the placer
// and the placement sweep (control.Queues), and the server processes tell
// it when a provisional session activates or ends (processes.Queues).
// An abandoned session's process is told to end through Processes
// (internal/processes). FlexMatch hears of a placement's end through
// Matchmaker. None of these
// packages imports another; internal/server wires them together.
package queueing

import (
	"context"
	"log/slog"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Control is what the queues need of the rest of the control plane.
// Methods taking a transaction run inside it.
type Control interface {
	// SessionPlaced sends a session Sessions.CreatePlacedSession made to
	// its process and tells the scaler of the demand; called after the
	// session commits.
	SessionPlaced(gs *game.GameSession, proc *game.Process)
	// AliasFleet returns the fleet a SIMPLE alias points to: NotFound or
	// TerminalRoutingStrategy otherwise.
	AliasFleet(tx store.Tx, aliasIDOrARN string) (string, error)
	// Owns reports whether this node acts for fleetID.
	Owns(fleetID string) bool
	// WakeOwner wakes the placer (only) of the node owning fleetID.
	WakeOwner(fleetID string)
	// PlacementHeld reports whether an injected fault keeps placement p
	// off fleetID's location at now.
	PlacementHeld(p *game.Placement, fleetID, location string, now time.Time) bool
	// PublishPlacementEvent appends a queue placement event of type typ
	// to the outbox; resource is the queue's ARN, target its
	// NotificationTarget.
	PublishPlacementEvent(tx store.Tx, typ, resource, target string, detail any) error
	// ReservePlacedSeats reserves a seat in a game session for each of a
	// placement's desired players (at least one), all or none.
	ReservePlacedSeats(tx store.Tx, gameSessionID string, players []game.DesiredPlayer) ([]*game.PlayerSession, error)
}

// Processes is what the queues need of the server processes
// (internal/processes implements it).
type Processes interface {
	// PushTerminate asks the process hosting gs, an abandoned session,
	// to end; called after the change commits.
	PushTerminate(ctx context.Context, gs *game.GameSession)
}

// Sessions is what the queues need of the game sessions
// (internal/sessions implements it). Methods run inside tx.
type Sessions interface {
	// CreatePlacedSession creates placement p's ACTIVATING game session
	// on a free process of fleet f in location, claimed for it; nil, nil
	// when none is free after all.
	CreatePlacedSession(tx store.Tx, f *game.Fleet, location string, p *game.Placement) (*game.GameSession, *game.Process, error)
	// AbandonSession marks a timed-out placement's provisional session
	// id, if still ACTIVATING, TERMINATING; it returns it when its
	// process must be told to end.
	AbandonSession(tx store.Tx, id string) (*game.GameSession, error)
}

// Matchmaker is FlexMatch as the queues see it.
type Matchmaker interface {
	// PlacementEnded is called inside the transaction that ends placement
	// p, whatever placed it; it acts on those that placed a match.
	PlacementEnded(tx store.Tx, p *game.Placement) error
}

// Config holds the service's settings.
type Config struct {
	// Account names the Region and account of every ARN shown.
	Account game.Account
	// MaxPlayersPerSession caps a placement's MaximumPlayerSessionCount:
	// control's setting of the same name.
	MaxPlayersPerSession int
}

// Service implements the queue and placement operations and the placer.
type Service struct {
	store store.Store
	ctl   Control
	cfg   Config
	now   func() time.Time
	log   *slog.Logger
	// placerWake wakes the placement committer (placer.go).
	placerWake chan struct{}
	// matchmaker is FlexMatch; nil until SetMatchmaker.
	matchmaker Matchmaker
	// sessions makes and abandons placements' game sessions; nil until
	// SetSessions.
	sessions Sessions
	// procs reach an abandoned session's process; nil until
	// SetProcesses.
	procs Processes
}

// New returns the queue service over st, asking ctl for the rest of the
// control plane. now is the clock (time.Now when nil): the one ctl runs
// on.
func New(st store.Store, ctl Control, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, ctl: ctl, cfg: cfg, now: now, log: log, placerWake: make(chan struct{}, 1)}
}

// SetMatchmaker tells m of every placement's end. Call it before the
// placer runs.
func (s *Service) SetMatchmaker(m Matchmaker) { s.matchmaker = m }

// SetSessions makes placements create and abandon their game sessions
// through ss. Call it before the placer runs; without it no placement
// can place a session.
func (s *Service) SetSessions(ss Sessions) { s.sessions = ss }

func (s *Service) createPlacedSession(tx store.Tx, f *game.Fleet, location string, p *game.Placement) (*game.GameSession, *game.Process, error) {
	if s.sessions == nil {
		return nil, nil, game.Errorf(game.Internal, "placement %s: no game session service is set", p.ID)
	}
	return s.sessions.CreatePlacedSession(tx, f, location, p)
}

func (s *Service) abandonSession(tx store.Tx, id string) (*game.GameSession, error) {
	if s.sessions == nil || id == "" {
		return nil, nil
	}
	return s.sessions.AbandonSession(tx, id)
}

// SetProcesses makes an abandoned session's process be told to end
// through p. Call it before the placement sweep runs.
func (s *Service) SetProcesses(p Processes) { s.procs = p }

func (s *Service) pushTerminate(ctx context.Context, gs *game.GameSession) {
	if s.procs != nil {
		s.procs.PushTerminate(ctx, gs)
	}
}

func (s *Service) matchPlacementEnded(tx store.Tx, p *game.Placement) error {
	if s.matchmaker == nil {
		return nil
	}
	return s.matchmaker.PlacementEnded(tx, p)
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
