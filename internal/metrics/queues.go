package metrics

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

var queueHelp = map[string]string{
	"QueueDepth":          "Game session placements in PENDING status.",
	"AverageWaitTime":     "Average time the PENDING placements have been waiting, in seconds.",
	"PlacementsStarted":   "Placements started in the last complete minute.",
	"PlacementsSucceeded": "Placements FULFILLED in the last complete minute.",
	"PlacementsFailed":    "Placements FAILED in the last complete minute.",
	"PlacementsTimedOut":  "Placements TIMED_OUT in the last complete minute.",
	"PlacementsCanceled":  "Placements CANCELLED in the last complete minute.",
}

var queueLabels = []string{"queue"}

// AllQueueMetrics measures every queue: PENDING placements at now, starts
// and outcomes in the minute that starts at minute.
func AllQueueMetrics(tx store.Tx, now, minute time.Time) ([]game.QueueMetrics, error) {
	var out []game.QueueMetrics
	token := ""
	for {
		queues, next, err := tx.ListQueues(store.Page{Limit: 100, Token: token})
		if err != nil {
			return nil, err
		}
		for _, q := range queues {
			m, err := tx.QueueMetrics(q.Name, now, minute, minute.Add(time.Minute))
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// QueueSource is the Source of the per-queue gauges (label queue):
// QueueDepth and AverageWaitTime now, placement outcomes over the last
// complete minute, as the fleet gauges count their transitions.
var QueueSource = SourceFunc(func(tx store.Tx, now time.Time) ([]Sample, error) {
	qs, err := AllQueueMetrics(tx, now, now.Truncate(time.Minute).Add(-time.Minute))
	if err != nil {
		return nil, err
	}
	out := make([]Sample, 0, len(qs)*len(game.QueueMetricNames))
	for _, m := range qs {
		vals := m.Values()
		for _, name := range game.QueueMetricNames {
			out = append(out, Sample{Name: Prefix + name, Help: queueHelp[name], LabelNames: queueLabels,
				LabelValues: []string{m.Queue}, Value: vals[name]})
		}
	}
	return out, nil
})

// QueueResource is the history's resource name of a queue: queues and
// fleets share the history, and a queue name could look like a fleet id.
func QueueResource(name string) string { return "queue/" + name }

// QueueMinutes is the MinuteSource of every queue's minute (no location):
// depth and wait as at the minute's end, starts and outcomes within it.
type QueueMinutes struct{}

// Minute implements MinuteSource.
func (QueueMinutes) Minute(tx store.Tx, minute time.Time) ([]game.MetricMinute, error) {
	qs, err := AllQueueMetrics(tx, minute.Add(time.Minute), minute)
	if err != nil {
		return nil, err
	}
	out := make([]game.MetricMinute, 0, len(qs))
	for _, m := range qs {
		out = append(out, game.MetricMinute{Resource: QueueResource(m.Queue), Minute: minute, Values: m.Values()})
	}
	return out, nil
}
