package queueing

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// A match's placement: FlexMatch starts and cancels it through the two
// methods below (flexmatch.Queues), and hears of its end through
// Matchmaker.

// StartMatchPlacement inserts p, a PENDING placement of a match on queue
// q, inside tx; its deadline is the queue's timeout after p.StartTime.
// The caller wakes the placer (WakePlacer) once tx has committed.
func (s *Service) StartMatchPlacement(tx store.Tx, q *game.Queue, p *game.Placement) error {
	p.Deadline = p.StartTime.Add(queueTimeout(q))
	return tx.InsertPlacement(p)
}

// CancelPlacement ends PENDING placement p CANCELLED inside tx, with its
// queue's event; the placement's end reaches the matchmaker as any other
// does.
func (s *Service) CancelPlacement(tx store.Tx, p *game.Placement) error {
	q, err := s.placementQueue(tx, p)
	if err != nil {
		return err
	}
	return s.endPlacement(tx, q, p, game.PlacementCancelled)
}
