package queueing

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// SessionActivated is called when gs becomes ACTIVE, inside that
// transaction (control.Queues): the PENDING placement that created gs, if any, seats its
// desired players (RESERVED) and becomes FULFILLED with its final
// connection details, and PlacementFulfilled is published.
func (s *Service) SessionActivated(tx store.Tx, gs *game.GameSession) error {
	p, err := tx.PlacementOfSession(gs.ID)
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(p.DesiredPlayers) > 0 {
		seats, err := s.ctl.ReservePlacedSeats(tx, gs.ID, p.DesiredPlayers)
		if err != nil {
			return err
		}
		p.PlacedPlayers = p.PlacedPlayers[:0]
		for _, ps := range seats {
			p.PlacedPlayers = append(p.PlacedPlayers, game.PlacedPlayer{PlayerID: ps.PlayerID, PlayerSessionID: ps.ID})
		}
	}
	p.IPAddress, p.DNSName, p.Port = gs.IPAddress, gs.DNSName, gs.Port
	q, err := s.placementQueue(tx, p)
	if err != nil {
		return err
	}
	return s.endPlacement(tx, q, p, game.PlacementFulfilled)
}

// SessionEnded is called when gs ends while ACTIVATING, inside that
// transaction (control.Queues). A session that failed to activate (ERROR) sends its
// placement back to be placed again while time remains; one terminated
// before it was active fails the placement.
func (s *Service) SessionEnded(tx store.Tx, gs *game.GameSession) error {
	p, err := tx.PlacementOfSession(gs.ID)
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if gs.Status == game.SessionError && s.clock().Before(p.Deadline) {
		p.GameSessionID, p.GameSessionRegion, p.FleetID, p.IPAddress, p.DNSName, p.Port = "", "", "", "", "", 0
		s.wakePlacer()
		return tx.UpdatePlacement(p)
	}
	q, err := s.placementQueue(tx, p)
	if err != nil {
		return err
	}
	return s.endPlacement(tx, q, p, game.PlacementFailed)
}

// SweepPlacements times out PENDING placements past their queue's
// timeout (a conditional update per placement, safe on several nodes),
// then retries the placement of those still waiting for capacity.
// Control's sweeps run it.
func (s *Service) SweepPlacements(ctx context.Context) error {
	now := s.clock()
	for {
		var due []*game.Placement
		err := s.view(ctx, func(tx store.Tx) error {
			var err error
			due, err = tx.ListPendingPlacements(store.PendingQuery{DueBy: now}, 100)
			return err
		})
		if err != nil {
			return err
		}
		for _, d := range due {
			if d.GameSessionID != "" && !s.ctl.Owns(d.FleetID) {
				continue // its provisional session's fleet is another node's to end
			}
			if err := s.timeOut(ctx, d.ID, now); err != nil {
				return err
			}
		}
		if len(due) < 100 {
			break
		}
	}
	return s.PlacePending(ctx)
}

// timeOut ends placement id TIMED_OUT if it is still PENDING and due. A
// provisional game session it left ACTIVATING belongs to nobody then: it
// is terminated as TerminateGameSession would (TERMINATING, and its
// process told to end), so that it neither holds the process nor turns
// ACTIVE with no placement to report it (docs/decisions.md). A session
// that became ACTIVE before this sweep has already fulfilled the placement.
func (s *Service) timeOut(ctx context.Context, id string, now time.Time) error {
	var orphan *game.GameSession
	err := s.update(ctx, func(tx store.Tx) error {
		orphan = nil
		p, err := tx.GetPlacement(id)
		if err != nil {
			return err
		}
		if p.Status != game.PlacementPending || now.Before(p.Deadline) {
			return nil
		}
		q, err := s.placementQueue(tx, p)
		if err != nil {
			return err
		}
		if orphan, err = s.abandonSession(tx, p.GameSessionID); err != nil {
			return err
		}
		return s.endPlacement(tx, q, p, game.PlacementTimedOut)
	})
	if err == nil && orphan != nil {
		s.pushTerminate(ctx, orphan)
	}
	return err
}

// queueTimeout is how long a placement on q may stay PENDING.
func queueTimeout(q *game.Queue) time.Duration {
	t := q.TimeoutSeconds
	if t <= 0 {
		t = game.DefaultQueueTimeout
	}
	return time.Duration(t) * time.Second
}
