package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/store"
)

// TestFleetMetricsOnScrape drives a real fleet (a Go SDK process, a game
// session, a player) and reads GameLift's metrics on /metrics, labelled
// by fleet and location, with the API's request counters, latency
// histograms and the connected processes.
func TestFleetMetricsOnScrape(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := fleettest.New(t, opts...)
			p := e.Process("host-1", "proc-1")
			id := e.Session(p, "arena")
			ctx := context.Background()
			if _, err := e.GL.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id),
				PlayerId: aws.String("player-1")}); err != nil {
				t.Fatal(err)
			}
			snaps := e.API.Server.Snapshots()
			if err := snaps.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			fams := scrape(t, e.API.URL)
			labels := map[string]string{"fleet_id": e.Fleet, "location": fleettest.Location}
			wantValues(t, fams, labels, map[string]float64{
				"gamelift_ActiveInstances": 1, "gamelift_IdleInstances": 0, "gamelift_PercentIdleInstances": 0,
				"gamelift_ActiveServerProcesses": 1, "gamelift_HealthyServerProcesses": 1,
				"gamelift_ActiveGameSessions": 1, "gamelift_ActivatingGameSessions": 0, "gamelift_AvailableGameSessions": 0,
				"gamelift_PercentAvailableGameSessions": 0, "gamelift_CurrentPlayerSessions": 1,
			})
			if got, _ := value(fams, "anylift_sdk_connected_processes", nil); got != 1 {
				t.Errorf("connected processes = %v, want 1", got)
			}
			if got, _ := value(fams, "anylift_api_requests_total", map[string]string{"operation": "CreatePlayerSession", "code": "OK"}); got != 1 {
				t.Errorf("CreatePlayerSession OK requests = %v, want 1", got)
			}
			if got, _ := value(fams, "anylift_api_request_duration_seconds", map[string]string{"operation": "CreateFleet"}); got != 1 {
				t.Errorf("CreateFleet latency samples = %v, want 1", got)
			}
			// A minute later, the transitions of the minute before are counted.
			e.Clock.Set(e.Clock.Now().Add(time.Minute))
			if err := snaps.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			fams = scrape(t, e.API.URL)
			if got, _ := value(fams, "gamelift_ServerProcessActivations", labels); got != 1 {
				t.Errorf("ServerProcessActivations = %v, want 1", got)
			}
		})
	}
}

// TestHistoryRecordsEachMinuteOnce writes the per-minute history from two
// writers at once (two nodes) and finds one row per minute.
func TestHistoryRecordsEachMinuteOnce(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := fleettest.New(t, opts...)
			p := e.Process("host-1", "proc-1")
			e.Session(p, "arena")
			start := e.Clock.Now().Truncate(time.Minute)
			e.Clock.Set(start.Add(time.Minute + 5*time.Second))
			ctx := context.Background()
			other := newHistory(e) // a second node's writer on the same store
			for _, h := range []interface{ Record(context.Context) error }{e.API.Server.History(), other, e.API.Server.History()} {
				if err := h.Record(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var n int
			err := e.API.Server.Store().View(ctx, func(tx store.Tx) error {
				ms, err := tx.MetricMinutes(e.Fleet, "", start.Add(-time.Hour), start.Add(time.Hour), 100)
				for _, m := range ms {
					if m.Minute.Equal(start) && m.Location == fleettest.Location {
						n++
						if m.Values["ActiveGameSessions"] != 1 || m.Values["ServerProcessActivations"] != 1 {
							t.Errorf("minute = %+v", m.Values)
						}
					}
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("%d rows for the minute, want 1", n)
			}
		})
	}
}
