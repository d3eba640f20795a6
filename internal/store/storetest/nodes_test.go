package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestNodesHeartbeatByTheDatabaseClock(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		Update(t, st, func(tx store.Tx) error {
			return tx.BeatNode(&store.Node{ID: "n1", Address: "http://10.0.0.1:9880", Started: t0})
		})
		View(t, st, func(tx store.Tx) error {
			n, err := tx.GetNode("n1", time.Hour)
			if err != nil {
				return err
			}
			if !n.Alive || n.Address != "http://10.0.0.1:9880" || !n.Started.Equal(t0) || n.Draining {
				t.Errorf("node %+v", n)
			}
			// A ttl in the past: the heartbeat is too old whatever the clocks.
			if n, _ := tx.GetNode("n1", -time.Hour); n.Alive {
				t.Error("alive with a negative ttl")
			}
			if _, err := tx.GetNode("n2", time.Hour); !game.IsKind(err, game.NotFound) {
				t.Errorf("missing node: %v", err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			return tx.BeatNode(&store.Node{ID: "n1", Address: "http://10.0.0.1:9880", Started: t0, Draining: true})
		})
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNodes(time.Hour)
			if err != nil || len(list) != 1 || !list[0].Draining {
				t.Errorf("nodes %v %v", list, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error { return tx.DeleteNode("n1") })
		View(t, st, func(tx store.Tx) error {
			if list, _ := tx.ListNodes(time.Hour); len(list) != 0 {
				t.Errorf("deleted node listed: %v", list)
			}
			return nil
		})
	})
}

func TestProcessHoldersAndOrphans(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		a, b := proc("c1", 1), proc("c1", 2)
		putProcs(t, st, a, b)
		ka := store.ProcessKey{FleetID: a.FleetID, ComputeName: a.ComputeName, PID: a.PID}
		kb := store.ProcessKey{FleetID: b.FleetID, ComputeName: b.ComputeName, PID: b.PID}
		Update(t, st, func(tx store.Tx) error {
			if err := tx.BeatNode(&store.Node{ID: "n1", Started: t0}); err != nil {
				return err
			}
			if err := tx.HoldProcess(ka, "n1"); err != nil {
				return err
			}
			if err := tx.HoldProcess(kb, "gone"); err != nil {
				return err
			}
			// Reconnected to n1: the holder moves.
			return tx.HoldProcess(kb, "n1")
		})
		Update(t, st, func(tx store.Tx) error {
			if ok, err := tx.ReleaseProcess(kb, "gone"); ok || err != nil {
				t.Errorf("released by a node that no longer holds it: %v %v", ok, err)
			}
			if h, _ := tx.ProcessHolder(kb); h != "n1" {
				t.Errorf("holder %q", h)
			}
			if ok, err := tx.ReleaseProcess(kb, "n1"); !ok || err != nil {
				t.Errorf("release: %v %v", ok, err)
			}
			if h, _ := tx.ProcessHolder(kb); h != "" {
				t.Errorf("holder after release %q", h)
			}
			return tx.HoldProcess(kb, "gone")
		})
		View(t, st, func(tx store.Tx) error {
			got, err := tx.OrphanedProcesses(time.Hour, 10)
			if err != nil || len(got) != 1 || got[0] != kb {
				t.Errorf("orphans with n1 alive: %v %v", got, err)
			}
			got, _ = tx.OrphanedProcesses(-time.Hour, 10)
			if len(got) != 2 {
				t.Errorf("orphans with every heartbeat too old: %v", got)
			}
			return nil
		})
	})
}

func TestStrandedProcessesAndEndedHoldings(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		live, away, ended, gone := proc("c1", 1), proc("c1", 2), proc("c1", 3), proc("c1", 4)
		away.Connected, away.DisconnectedAt = false, t0
		ended.Status, ended.Connected = game.ProcessTerminated, false
		putProcs(t, st, live, away, ended)
		key := func(p *game.Process) store.ProcessKey {
			return store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
		}
		Update(t, st, func(tx store.Tx) error {
			if err := tx.BeatNode(&store.Node{ID: "n1", Started: t0}); err != nil {
				return err
			}
			for p, n := range map[*game.Process]string{live: "n1", away: "n1", ended: "dead", gone: "n1"} {
				if err := tx.HoldProcess(key(p), n); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			got, err := tx.StrandedProcesses("n1", 10)
			if err != nil || len(got) != 1 || got[0] != key(away) {
				t.Errorf("stranded on n1: %v %v", got, err)
			}
			if got, _ := tx.StrandedProcesses("dead", 10); len(got) != 0 {
				t.Errorf("an ended process is not stranded: %v", got)
			}
			hs, err := tx.EndedHoldings(time.Hour, 10)
			if err != nil || len(hs) != 1 || hs[0] != (store.Holding{Process: key(ended), NodeID: "dead"}) {
				t.Errorf("ended holdings with n1 alive: %v %v", hs, err)
			}
			// Every heartbeat too old: the gone process's record too.
			hs, _ = tx.EndedHoldings(-time.Hour, 10)
			if len(hs) != 2 || hs[0].Process != key(ended) || hs[1] != (store.Holding{Process: key(gone), NodeID: "n1"}) {
				t.Errorf("ended holdings with every node dead: %v", hs)
			}
			return nil
		})
	})
}

// TestSweepQueriesWithManyOrNoDeadNodes: the sweeps' queries first ask
// which holding nodes are dead; with none they find nothing, and with more
// dead nodes than they list by id they scan them all, with the same
// answers.
func TestSweepQueriesWithManyOrNoDeadNodes(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		const n = 70
		var ps []*game.Process
		for i := range n {
			ps = append(ps, proc("c1", i))
		}
		ps[n-1].Status, ps[n-1].Connected = game.ProcessTerminated, false
		putProcs(t, st, ps...)
		key := func(p *game.Process) store.ProcessKey {
			return store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
		}
		Update(t, st, func(tx store.Tx) error {
			if err := tx.BeatNode(&store.Node{ID: "n1", Started: t0}); err != nil {
				return err
			}
			for _, p := range ps {
				if err := tx.HoldProcess(key(p), "n1"); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			if got, err := tx.OrphanedProcesses(time.Hour, 100); err != nil || len(got) != 0 {
				t.Errorf("orphans with the only holder alive: %v %v", got, err)
			}
			if hs, err := tx.EndedHoldings(time.Hour, 100); err != nil || len(hs) != 0 {
				t.Errorf("ended holdings with the only holder alive: %v %v", hs, err)
			}
			if got, err := tx.StrandedProcesses("n1", 100); err != nil || len(got) != 0 {
				t.Errorf("stranded with every process connected or ended: %v %v", got, err)
			}
			return nil
		})
		// Each process held by a node of its own, every one of them gone.
		Update(t, st, func(tx store.Tx) error {
			for i, p := range ps {
				if err := tx.HoldProcess(key(p), fmt.Sprintf("gone-%03d", i)); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			got, err := tx.OrphanedProcesses(time.Hour, 100)
			if err != nil || len(got) != n-1 || got[0] != key(ps[0]) || got[n-2] != key(ps[n-2]) {
				t.Errorf("orphans held by %d gone nodes: %d %v", n, len(got), err)
			}
			if got, _ := tx.OrphanedProcesses(time.Hour, 5); len(got) != 5 || got[4] != key(ps[4]) {
				t.Errorf("first five orphans: %v", got)
			}
			hs, err := tx.EndedHoldings(time.Hour, 100)
			if err != nil || len(hs) != 1 || hs[0] != (store.Holding{Process: key(ps[n-1]), NodeID: fmt.Sprintf("gone-%03d", n-1)}) {
				t.Errorf("ended holdings of %d gone nodes: %v %v", n, hs, err)
			}
			return nil
		})
		// A few gone nodes among live ones: listed by id.
		Update(t, st, func(tx store.Tx) error {
			for i, p := range ps {
				node := "n1"
				if i%20 == 0 {
					node = fmt.Sprintf("gone-%03d", i)
				}
				if err := tx.HoldProcess(key(p), node); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			got, err := tx.OrphanedProcesses(time.Hour, 100)
			want := []store.ProcessKey{key(ps[0]), key(ps[20]), key(ps[40]), key(ps[60])}
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("orphans of four gone nodes: %v %v", got, err)
			}
			return nil
		})
		// A process that disconnects may be stranded; once it ends it is not.
		away := *ps[1]
		away.Connected, away.DisconnectedAt = false, t0
		putProcs(t, st, &away)
		View(t, st, func(tx store.Tx) error {
			if got, err := tx.StrandedProcesses("n1", 100); err != nil || len(got) != 1 || got[0] != key(&away) {
				t.Errorf("stranded after a disconnection: %v %v", got, err)
			}
			return nil
		})
		away.Status = game.ProcessTerminated
		putProcs(t, st, &away)
		View(t, st, func(tx store.Tx) error {
			if got, err := tx.StrandedProcesses("n1", 100); err != nil || len(got) != 0 {
				t.Errorf("stranded after the process ended: %v %v", got, err)
			}
			return nil
		})
	})
}

// TestReleaseNodeProcessesAtRestart: a node that starts again with the
// same id holds no connection; what the store says it held from before is
// released and its connected processes are marked disconnected, in the
// columns the timers query and in the record itself. Other nodes'
// processes, and ones already disconnected or ended, keep their state.
func TestReleaseNodeProcessesAtRestart(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		mine, away, ended, other := proc("c1", 1), proc("c1", 2), proc("c1", 3), proc("c1", 4)
		away.Connected, away.DisconnectedAt = false, t0
		ended.Status, ended.Connected = game.ProcessTerminated, false
		putProcs(t, st, mine, away, ended, other)
		key := func(p *game.Process) store.ProcessKey {
			return store.ProcessKey{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
		}
		Update(t, st, func(tx store.Tx) error {
			for p, n := range map[*game.Process]string{mine: "n1", away: "n1", ended: "n1", other: "n2"} {
				if err := tx.HoldProcess(key(p), n); err != nil {
					return err
				}
			}
			return nil
		})
		at := t0.Add(time.Minute)
		Update(t, st, func(tx store.Tx) error {
			n, err := tx.ReleaseNodeProcesses("n1", at)
			if err != nil || n != 1 {
				t.Errorf("released %d, %v; want 1", n, err)
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			want := *mine
			want.Connected, want.DisconnectedAt = false, at
			for _, w := range []*game.Process{&want, away, ended, other} {
				got, err := tx.GetProcess(w.FleetID, w.ComputeName, w.PID)
				if err != nil || !reflect.DeepEqual(got, w) {
					t.Errorf("process %s: got %+v, %v; want %+v", w.PID, got, err, w)
				}
			}
			for p, n := range map[*game.Process]string{mine: "", away: "", ended: "", other: "n2"} {
				if h, err := tx.ProcessHolder(key(p)); h != n || err != nil {
					t.Errorf("holder of %s: %q %v; want %q", p.PID, h, err, n)
				}
			}
			// The lost-process timer finds it by its columns once the
			// grace has run from at, not before.
			if s, _ := tx.StaleProcesses(at.Add(-time.Millisecond), t0.Add(-time.Hour), t0, 10); len(s) != 1 || s[0].PID != away.PID {
				t.Errorf("stale before the grace: %v", s)
			}
			if s, _ := tx.StaleProcesses(at, t0.Add(-time.Hour), t0, 10); len(s) != 2 {
				t.Errorf("stale after the grace: %v", s)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			if n, err := tx.ReleaseNodeProcesses("n1", at.Add(time.Minute)); n != 0 || err != nil {
				t.Errorf("released again: %d %v", n, err)
			}
			return nil
		})
	})
}
