package processes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/storetest"
	"github.com/anylift/anylift/internal/wire"
)

// heldConns stands in for a node's WebSocket hub: the set of processes
// whose connection is open on the node, and the pushes sent to them.
type heldConns struct {
	mu     sync.Mutex
	open   map[Ref]bool
	pushed []sdkwire.Push
}

func (h *heldConns) Push(p Ref, msg sdkwire.Push) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[p] {
		h.pushed = append(h.pushed, msg)
	}
	return h.open[p]
}

func (h *heldConns) Disconnect(p Ref, reason string) {}

func (h *heldConns) Holds(p Ref) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open[p]
}

// TestStalledNodeKeepsItsLiveConnections: node A's heartbeat stalls past
// the node ttl, so node B's orphan sweep marks A's processes
// disconnected. A process whose connection is still open on A is never
// declared lost while A is alive, and A marks it connected again at its
// next heartbeat; one whose connection A no longer has is released and
// lost after the grace. Ended processes leave no holder record behind.
func TestStalledNodeKeepsItsLiveConnections(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		now := time.UnixMilli(1767225600000).UTC()
		clock := func() time.Time { return now }
		node := func(id string, ttl time.Duration) *node {
			return newNode(st, control.Config{NodeID: id, NodeTTL: ttl}, clock)
		}
		a := node("a", 0)
		// B judges by a ttl so short that A's heartbeat is always too
		// old: what B sees while A's heartbeat stalls. C sees A alive.
		b, c := node("b", time.Nanosecond), node("c", 0)
		hub := &heldConns{open: map[Ref]bool{}}
		a.SetPusher(hub)
		fleet := stallFleet(t, a.Service)
		live, closed := Ref{FleetID: fleet, ComputeName: "h1", PID: "live"}, Ref{FleetID: fleet, ComputeName: "h1", PID: "closed"}
		must(t, a.BeatNode(ctx))
		for _, p := range []Ref{live, closed} {
			must(t, a.ProcessConnected(ctx, p, Connection{SDKVersion: "5.0", SDKLanguage: "Go", TokenExpires: now.Add(time.Hour)}))
			hub.open[p] = true
		}
		// closed's connection went without its disconnection being recorded.
		delete(hub.open, closed)

		must(t, b.SweepOrphans(ctx))
		for _, p := range []Ref{live, closed} {
			if got := stallProcess(t, a.Service, p); got.Connected {
				t.Fatalf("%s still connected after B's orphan sweep", p.PID)
			}
		}
		now = now.Add(time.Minute) // past the lost-process grace
		must(t, c.SweepProcesses(ctx))
		if got := stallProcess(t, a.Service, live); got.Status == game.ProcessTerminated {
			t.Fatal("a process whose node is alive was declared lost")
		}

		must(t, a.BeatNode(ctx))
		must(t, a.ReclaimStranded(ctx))
		if got := stallProcess(t, a.Service, live); !got.Connected || !got.DisconnectedAt.IsZero() || stallHolder(t, a.Service, live) != "a" {
			t.Errorf("live process after A's heartbeat: %+v held by %q", got, stallHolder(t, a.Service, live))
		}
		if got := stallProcess(t, a.Service, closed); got.Connected || stallHolder(t, a.Service, closed) != "" {
			t.Errorf("closed process after A's heartbeat: %+v held by %q", got, stallHolder(t, a.Service, closed))
		}
		now = now.Add(time.Minute)
		must(t, b.SweepProcesses(ctx))
		if got := stallProcess(t, a.Service, live); got.Status == game.ProcessTerminated || !got.Connected {
			t.Errorf("live process after a later sweep: %+v", got)
		}
		if got := stallProcess(t, a.Service, closed); got.Status != game.ProcessTerminated {
			t.Errorf("closed process not lost: %+v", got)
		}

		// A process held by a node that died, lost after the grace: its
		// holder record goes at the next sweep.
		gone := node("gone", 0)
		orphan := Ref{FleetID: fleet, ComputeName: "h1", PID: "orphan"}
		must(t, gone.ProcessConnected(ctx, orphan, Connection{SDKVersion: "5.0", SDKLanguage: "Go", TokenExpires: now.Add(time.Hour)}))
		must(t, c.SweepOrphans(ctx))
		now = now.Add(time.Minute)
		must(t, c.SweepProcesses(ctx))
		must(t, c.PruneHoldings(ctx))
		if got := stallProcess(t, a.Service, orphan); got.Status != game.ProcessTerminated || stallHolder(t, a.Service, orphan) != "" {
			t.Errorf("orphan %+v still held by %q", got, stallHolder(t, a.Service, orphan))
		}
		// A process that ends and then closes its connection on a live node.
		must(t, a.ProcessEnding(ctx, live))
		delete(hub.open, live)
		must(t, a.ProcessDisconnected(ctx, live))
		if h := stallHolder(t, a.Service, live); h != "" {
			t.Errorf("ended process still held by %q", h)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func stallFleet(t *testing.T, s *Service) string {
	t.Helper()
	ctx := context.Background()
	f := &game.Fleet{ID: "fleet-stall", Status: game.FleetActive, ComputeType: wire.ComputeTypeAnywhere, Locations: []string{"custom-x"}}
	c := &game.Compute{FleetID: f.ID, Name: "h1", Location: "custom-x", IPAddress: "10.0.0.1", Status: game.ComputeActive, CreationTime: s.clock()}
	must(t, s.update(ctx, func(tx store.Tx) error {
		if err := tx.InsertFleet(f); err != nil {
			return err
		}
		return tx.InsertCompute(c)
	}))
	return f.ID
}

func stallProcess(t *testing.T, s *Service, r Ref) *game.Process {
	t.Helper()
	var p *game.Process
	must(t, s.view(context.Background(), func(tx store.Tx) error {
		var err error
		p, err = tx.GetProcess(r.FleetID, r.ComputeName, r.PID)
		return err
	}))
	return p
}

func stallHolder(t *testing.T, s *Service, r Ref) string {
	t.Helper()
	var id string
	must(t, s.view(context.Background(), func(tx store.Tx) error {
		var err error
		id, err = tx.ProcessHolder(r)
		return err
	}))
	return id
}
