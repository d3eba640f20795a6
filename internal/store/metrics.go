package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// MetricsTx reads the aggregates behind fleet metrics and keeps their
// per-minute history. Aggregates are computed from the records, so every
// node reports the same numbers and nothing is counted twice.
type MetricsTx interface {
	// FleetMetrics measures fleet f now, one entry per location of f in
	// the fleet's location order; transitions are counted in [since, until).
	FleetMetrics(f *game.Fleet, since, until time.Time) ([]game.FleetMetrics, error)
	// InsertMetricMinutes records each minute that is not recorded yet
	// (by Resource, Location and Minute) and leaves recorded ones as they
	// are, so several nodes may write the same minute; it returns how many
	// it inserted.
	InsertMetricMinutes(ms []game.MetricMinute) (int, error)
	// MetricMinutes lists a resource's minutes with from <= Minute < to,
	// in one location ("" for all), by location then minute, at most max.
	MetricMinutes(resource, location string, from, to time.Time, max int) ([]game.MetricMinute, error)
	// DeleteMetricMinutes removes at most max minutes that start before t
	// and returns how many it removed.
	DeleteMetricMinutes(before time.Time, max int) (int, error)
}

// LiveSessionCounts counts a fleet's live game sessions (ACTIVATING,
// ACTIVE, TERMINATING) from memory, for the fleet metrics
// (sqldb.DB.SetLiveSessionCounts): for each location and compute with
// live sessions, how many are ACTIVATING and ACTIVE and how many player
// seats they hold, as the store would group them.
// ok false: the memory does not answer for the fleet, the store counts.
type LiveSessionCounts interface {
	CountLive(fleetID string, visit func(location, compute string, activating, active, players int64)) (ok bool)
}
