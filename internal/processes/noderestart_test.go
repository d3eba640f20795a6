package processes

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/storetest"
)

// TestRestartedNodeReleasesItsProcesses: a node that starts again with
// the same id has none of its old connections. Its processes are marked
// disconnected when it joins, so one that never comes back is lost after
// the grace and one that reconnects within the grace is kept.
func TestRestartedNodeReleasesItsProcesses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		now := time.UnixMilli(1767225600000).UTC()
		clock := func() time.Time { return now }
		cfg := control.Config{NodeID: "pinned", ProcessLostGrace: 30 * time.Second}
		before := newNode(st, cfg, clock)
		hub := &heldConns{open: map[Ref]bool{}}
		before.SetPusher(hub)
		fleet := stallFleet(t, before.Service)
		gone, back := Ref{FleetID: fleet, ComputeName: "h1", PID: "gone"}, Ref{FleetID: fleet, ComputeName: "h1", PID: "back"}
		must(t, before.JoinCluster(ctx))
		for _, p := range []Ref{gone, back} {
			must(t, before.ProcessConnected(ctx, p, Connection{SDKVersion: "5.0", SDKLanguage: "Go", TokenExpires: now.Add(time.Hour)}))
			hub.open[p] = true
		}

		// The node dies without recording the disconnections and starts
		// again at once with the same id and an empty hub.
		now = now.Add(time.Second)
		after := newNode(st, cfg, clock)
		after.SetPusher(&heldConns{open: map[Ref]bool{}})
		must(t, after.JoinCluster(ctx))
		for _, p := range []Ref{gone, back} {
			if got := stallProcess(t, after.Service, p); got.Connected || !got.DisconnectedAt.Equal(now) || stallHolder(t, after.Service, p) != "" {
				t.Fatalf("%s after the restart: %+v held by %q", p.PID, got, stallHolder(t, after.Service, p))
			}
		}
		timers := func() {
			for _, f := range []func(context.Context) error{after.BeatNode, after.ReclaimStranded, after.SweepOrphans, after.SweepProcesses} {
				must(t, f(ctx))
			}
		}
		now = now.Add(10 * time.Second)
		must(t, after.ProcessConnected(ctx, back, Connection{SDKVersion: "5.0", SDKLanguage: "Go", TokenExpires: now.Add(time.Hour)}))
		timers()
		if got := stallProcess(t, after.Service, gone); got.Status == game.ProcessTerminated {
			t.Fatal("lost before the grace ran out")
		}
		now = now.Add(30 * time.Second)
		timers()
		if got := stallProcess(t, after.Service, gone); got.Status != game.ProcessTerminated {
			t.Errorf("a process that never came back is not lost: %+v", got)
		}
		if got := stallProcess(t, after.Service, back); got.Status == game.ProcessTerminated || !got.Connected || stallHolder(t, after.Service, back) != "pinned" {
			t.Errorf("a process that reconnected within the grace: %+v held by %q", got, stallHolder(t, after.Service, back))
		}
	})
}
