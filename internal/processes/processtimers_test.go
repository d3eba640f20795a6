package processes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/storetest"
)

// staleReads is a real store that counts the process timer's readings.
type staleReads struct {
	store.Store
	n atomic.Int64
}

func (s *staleReads) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(staleReadsTx{tx, &s.n}) })
}

type staleReadsTx struct {
	store.Tx
	n *atomic.Int64
}

func (t staleReadsTx) NextStale(lostGrace, unhealthyTimeout, refreshMargin time.Duration) (time.Time, error) {
	t.n.Add(1)
	return t.Tx.NextStale(lostGrace, unhealthyTimeout, refreshMargin)
}

// The process timer reads the store only when a process may be due: a
// run that finds nothing learns when the first will be (a healthy report
// three minutes on, a token's refresh, a disconnection's grace), and the
// runs before then read nothing. It still acts at the exact time each
// process is due: a process lost, a token refreshed (its connection made
// after that reading, with a token minted long before), a silent process
// ended as unhealthy.
func TestProcessTimerReadsOnlyWhenDue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		now := time.UnixMilli(1767225600000).UTC()
		t0 := now
		reads := &staleReads{Store: st}
		n := newNode(reads, control.Config{NodeID: "a"}, func() time.Time { return now })
		hub := &heldConns{open: map[Ref]bool{}}
		n.SetPusher(hub)
		fleet := stallFleet(t, n.Service)
		ref := func(pid string) Ref { return Ref{FleetID: fleet, ComputeName: "h1", PID: pid} }
		start := func(pid string, tokenExpires time.Time) {
			t.Helper()
			must(t, n.ProcessConnected(ctx, ref(pid), Connection{SDKVersion: "5.0", SDKLanguage: "Go", TokenExpires: tokenExpires}))
			must(t, n.ProcessReady(ctx, ref(pid), &sdkwire.ActivateServerProcess{SdkVersion: "5.0", SdkLanguage: "Go", Port: 7000}))
			hub.open[ref(pid)] = true
		}
		// sweepTo runs the timer every second up to at, as the node's loop
		// does, and reports how many of those runs read the store.
		sweepTo := func(at time.Time) int64 {
			t.Helper()
			before := reads.n.Load()
			for now.Before(at) {
				now = now.Add(time.Second)
				must(t, n.SweepProcesses(ctx))
			}
			return reads.n.Load() - before
		}
		status := func(pid string) string { return stallProcess(t, n.Service, ref(pid)).Status }

		start("lost", t0.Add(time.Hour))
		start("silent", t0.Add(time.Hour))
		must(t, n.SweepProcesses(ctx))
		if reads.n.Load() != 1 {
			t.Fatalf("first run: %d readings, want 1", reads.n.Load())
		}
		// Nothing can be due before the grace of a disconnection that
		// has not happened yet.
		if r := sweepTo(t0.Add(29 * time.Second)); r != 0 {
			t.Errorf("%d readings in the first 29 s, want none", r)
		}

		// Just after a reading (at 30 s, which found nothing due for the
		// next 30 s), a connection whose token, minted long before, is
		// due for a refresh at 45 s.
		sweepTo(t0.Add(30 * time.Second))
		now = t0.Add(31 * time.Second)
		expires := t0.Add(45*time.Second + 2*time.Minute)
		start("refresh", expires)
		must(t, n.ProcessHeartbeat(ctx, ref("lost"), true))
		must(t, n.ProcessHeartbeat(ctx, ref("refresh"), true))
		sweepTo(t0.Add(44 * time.Second))
		if got := stallProcess(t, n.Service, ref("refresh")).TokenExpires; !got.Equal(expires) {
			t.Fatalf("token refreshed before it was due: expires %v", got)
		}
		sweepTo(t0.Add(45 * time.Second))
		if got := stallProcess(t, n.Service, ref("refresh")).TokenExpires; !got.After(now.Add(10 * time.Minute)) {
			t.Errorf("token not refreshed when due (45 s): expires %v", got)
		}

		// A disconnection: lost exactly at its grace.
		now = t0.Add(100 * time.Second)
		delete(hub.open, ref("lost"))
		must(t, n.ProcessDisconnected(ctx, ref("lost")))
		must(t, n.ProcessHeartbeat(ctx, ref("refresh"), true))
		sweepTo(t0.Add(129 * time.Second))
		if s := status("lost"); s == game.ProcessTerminated {
			t.Fatal("lost before its grace")
		}
		sweepTo(t0.Add(130 * time.Second))
		if s := status("lost"); s != game.ProcessTerminated {
			t.Errorf("lost process is %s at its grace, want TERMINATED", s)
		}

		// silent has not reported since it became ACTIVE at t0: ended as
		// unhealthy exactly three minutes on, the runs between reading
		// the store a few times, not at every second.
		r := sweepTo(t0.Add(3*time.Minute - time.Second))
		if s := status("silent"); s == game.ProcessTerminated {
			t.Fatal("silent process ended before its timeout")
		}
		if r > 4 {
			t.Errorf("%d readings in 50 s with nothing due, want a few", r)
		}
		sweepTo(t0.Add(3 * time.Minute))
		if s := status("silent"); s != game.ProcessTerminated {
			t.Errorf("silent process is %s at its timeout, want TERMINATED", s)
		}
	})
}
