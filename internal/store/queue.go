package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// QueueTx reads and writes game session queues and placements.
type QueueTx interface {
	// InsertQueue stores a new queue; Conflict when the name is taken.
	InsertQueue(q *game.Queue) error
	// GetQueue returns a queue by name; NotFound when absent.
	GetQueue(name string) (*game.Queue, error)
	// UpdateQueue overwrites a queue; NotFound when absent.
	UpdateQueue(q *game.Queue) error
	// DeleteQueue removes a queue; NotFound when absent.
	DeleteQueue(name string) error
	// ListQueues lists queues by name. A malformed p.Token is InvalidRequest.
	ListQueues(p Page) (list []*game.Queue, next string, err error)

	// InsertPlacement stores a new placement; Conflict when the id is taken.
	InsertPlacement(p *game.Placement) error
	// GetPlacement returns a placement; NotFound when absent. Inside
	// Update it locks the record.
	GetPlacement(id string) (*game.Placement, error)
	// UpdatePlacement overwrites a placement; NotFound when absent.
	UpdatePlacement(p *game.Placement) error
	// PlacementOfSession returns the PENDING placement whose provisional
	// game session is gameSessionID; NotFound when there is none.
	PlacementOfSession(gameSessionID string) (*game.Placement, error)
	// ListPendingPlacements returns up to max PENDING placements, oldest
	// first, that match q.
	ListPendingPlacements(q PendingQuery, max int) ([]*game.Placement, error)
	// CountFreeProcesses counts, up to max, a fleet's processes in
	// location free to host a game session (as ClaimFreeProcess defines
	// free, activation caps aside). The cap keeps the cost independent of
	// the fleet's size.
	CountFreeProcesses(fleetID, location string, max int) (int, error)
}

// PendingQuery selects PENDING placements: all zero selects every one.
type PendingQuery struct {
	// Unplaced keeps only placements without a provisional game session.
	Unplaced bool
	// Queue keeps only the placements of that queue name.
	Queue string
	// DueBy keeps only placements whose deadline is at or before it.
	DueBy time.Time
	// After, when set, keeps only placements after it in the list's order
	// (StartTime, then ID): the next page after a placement seen.
	After *game.Placement
}
