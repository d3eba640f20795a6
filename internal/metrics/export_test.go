package metrics_test

import (
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/metrics"
)

func newHistory(e *fleettest.Env) *metrics.History {
	return metrics.NewHistory(e.API.Server.Store(), 0, e.Clock.Now, nil)
}
