package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// QueueMetricsTx reads the aggregates behind queue metrics and the
// console's placement lists. Aggregates come from the placement records,
// so every node reports the same numbers and nothing is counted twice.
type QueueMetricsTx interface {
	// QueueMetrics measures queue name: its PENDING placements at now
	// (count and average wait), and its placements started, and ended by
	// final status, in [since, until). An unknown queue measures zero.
	QueueMetrics(name string, now, since, until time.Time) (game.QueueMetrics, error)
	// ListPlacements lists placements newest first (StartTime, then id,
	// descending), of one queue and in one status when those are set. A
	// malformed p.Token is InvalidRequest.
	ListPlacements(f PlacementFilter, p Page) (list []*game.Placement, next string, err error)
}

// PlacementFilter selects placements: zero fields select all.
type PlacementFilter struct {
	Queue  string
	Status string
}
