package game

// QueueMetricNames are the queue metrics, with CloudWatch's names,
// in the order they are shown.
var QueueMetricNames = []string{"QueueDepth", "AverageWaitTime", "PlacementsStarted", "PlacementsSucceeded",
	"PlacementsFailed", "PlacementsTimedOut", "PlacementsCanceled"}

// QueueMetrics is one queue's measurement: the PENDING placements now,
// and the placements that started or ended in a window (a minute).
type QueueMetrics struct {
	Queue string
	// QueueDepth counts PENDING placements.
	QueueDepth int
	// AverageWaitTime is how long, on average, the PENDING placements have
	// been waiting, in seconds (0 when none is PENDING).
	AverageWaitTime     float64
	PlacementsStarted   int
	PlacementsSucceeded int // FULFILLED
	PlacementsFailed    int
	PlacementsTimedOut  int
	PlacementsCanceled  int
}

// Values maps QueueMetricNames to the measurement's values.
func (m QueueMetrics) Values() map[string]float64 {
	return map[string]float64{
		"QueueDepth":          float64(m.QueueDepth),
		"AverageWaitTime":     m.AverageWaitTime,
		"PlacementsStarted":   float64(m.PlacementsStarted),
		"PlacementsSucceeded": float64(m.PlacementsSucceeded),
		"PlacementsFailed":    float64(m.PlacementsFailed),
		"PlacementsTimedOut":  float64(m.PlacementsTimedOut),
		"PlacementsCanceled":  float64(m.PlacementsCanceled),
	}
}
