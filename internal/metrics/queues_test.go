package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/metrics"
	"github.com/anylift/anylift/internal/store"
)

// TestQueueMetricsOnScrape places through a real queue onto a real SDK
// process (one fulfilled, one waiting, one stopped) and reads the queue's
// gauges on /metrics and its minute in the history.
func TestQueueMetricsOnScrape(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := fleettest.New(t, opts...)
			p := e.Process("host-1", "proc-1")
			e.Queue("arena", "")
			e.Start("arena", "pl-1", nil)
			e.Fulfil(p, "pl-1")
			e.Start("arena", "pl-2", nil) // no free process: waits
			e.Start("arena", "pl-3", nil)
			ctx := context.Background()
			if _, err := e.GL.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-3")}); err != nil {
				t.Fatal(err)
			}
			start := e.Clock.Now().Truncate(time.Minute)
			e.Clock.Set(e.Clock.Now().Add(20 * time.Second))
			snaps := e.API.Server.Snapshots()
			if err := snaps.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			labels := map[string]string{"queue": "arena"}
			fams := scrape(t, e.API.URL)
			wantValues(t, fams, labels, map[string]float64{"gamelift_QueueDepth": 1, "gamelift_AverageWaitTime": 20,
				"gamelift_PlacementsStarted": 0})
			// The next minute, the placements of the one before are counted.
			e.Clock.Set(start.Add(time.Minute + 5*time.Second))
			if err := snaps.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			fams = scrape(t, e.API.URL)
			wantValues(t, fams, labels, map[string]float64{"gamelift_PlacementsStarted": 3, "gamelift_PlacementsSucceeded": 1,
				"gamelift_PlacementsCanceled": 1, "gamelift_PlacementsTimedOut": 0, "gamelift_PlacementsFailed": 0})
			if err := e.API.Server.History().Record(ctx); err != nil {
				t.Fatal(err)
			}
			err := e.API.Server.Store().View(ctx, func(tx store.Tx) error {
				ms, err := tx.MetricMinutes(metrics.QueueResource("arena"), "", start, start.Add(time.Minute), 10)
				if len(ms) != 1 || ms[0].Values["PlacementsStarted"] != 3 || ms[0].Values["QueueDepth"] != 1 ||
					ms[0].Values["PlacementsSucceeded"] != 1 {
					t.Errorf("history: %+v", ms)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
