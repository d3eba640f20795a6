package metrics_test

import (
	"github.com/anylift/anylift/internal/metrics"
)

func newHistory(e *env) *metrics.History {
	return metrics.NewHistory(e.api.Server.Store(), 0, e.clock.Now, nil)
}
