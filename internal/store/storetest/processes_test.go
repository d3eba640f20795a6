package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// proc returns a free process i of fleet-a on compute in custom-a, created
// at t0 + i ms.
func proc(compute string, i int) *game.Process {
	at := t0.Add(time.Duration(i) * time.Millisecond)
	return &game.Process{FleetID: "fleet-a", ComputeName: compute, PID: fmt.Sprintf("p%03d", i), Location: "custom-a",
		Status: game.ProcessActive, Port: 7000 + i, Healthy: true, Connected: true, LastHealthy: at, CreationTime: at,
		LogPaths: []string{"/log"}, SDKVersion: "5.6.0", SDKLanguage: "Go"}
}

func putProcs(t *testing.T, st store.Store, ps ...*game.Process) {
	t.Helper()
	Update(t, st, func(tx store.Tx) error {
		for _, p := range ps {
			if err := tx.PutProcess(p); err != nil {
				return err
			}
		}
		return nil
	})
}

func claim(st store.Store, gs string, maxActivating int) (*game.Process, error) {
	var p *game.Process
	err := st.Update(context.Background(), func(tx store.Tx) error {
		var err error
		p, err = tx.ClaimFreeProcess("fleet-a", "custom-a", gs, maxActivating)
		return err
	})
	return p, err
}

func TestProcessPutGet(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		p := proc("c1", 1)
		putProcs(t, st, p)
		p.Healthy, p.LastHealthy = false, t0.Add(time.Minute)
		putProcs(t, st, p)
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetProcess("fleet-a", "c1", "p001")
			if err != nil {
				return err
			}
			if !got.LastHealthy.Equal(p.LastHealthy) || got.Healthy || got.Port != 7001 || got.SDKVersion != "5.6.0" ||
				!got.CreationTime.Equal(p.CreationTime) || len(got.LogPaths) != 1 {
				t.Errorf("GetProcess = %+v", got)
			}
			if _, err := tx.GetProcess("fleet-a", "c2", "p001"); !game.IsKind(err, game.NotFound) {
				t.Errorf("other compute: %v, want NotFound", err)
			}
			return nil
		})
	})
}

// TestProcessPutConcurrent: writers racing to put one new process (the
// first to insert it, the others to update it, or to insert and meet the
// row another inserted meanwhile) all succeed, and the row is one of the
// records written, its creation time the first's.
func TestProcessPutConcurrent(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := proc("c1", 1)
				p.Port, p.LastHealthy = 8000+i, t0.Add(time.Duration(i)*time.Second)
				errs <- st.Update(context.Background(), func(tx store.Tx) error { return tx.PutProcess(p) })
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("PutProcess: %v", err)
			}
		}
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetProcess("fleet-a", "c1", "p001")
			if err != nil {
				return err
			}
			i := got.Port - 8000
			if i < 0 || i >= n || !got.LastHealthy.Equal(t0.Add(time.Duration(i)*time.Second)) || !got.CreationTime.Equal(proc("c1", 1).CreationTime) {
				t.Errorf("GetProcess = %+v, not one of the records written", got)
			}
			return nil
		})
	})
}

func TestClaimFreeProcess(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		busy, sick, gone, ready, other := proc("c1", 1), proc("c1", 2), proc("c1", 3), proc("c1", 4), proc("c1", 0)
		busy.GameSessionID = "gs-old"
		sick.Healthy = false
		gone.Connected = false
		ready.Status = game.ProcessConnected
		other.Location = "custom-b"
		free := proc("c1", 5)
		putProcs(t, st, busy, sick, gone, ready, other, free)
		p, err := claim(st, "gs-1", 0)
		if err != nil || p.PID != "p005" || p.GameSessionID != "gs-1" {
			t.Fatalf("claim = %+v, %v; want p005", p, err)
		}
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetProcess("fleet-a", "c1", "p005")
			if err == nil && got.GameSessionID != "gs-1" {
				t.Errorf("stored GameSessionID %q", got.GameSessionID)
			}
			return err
		})
		if _, err := claim(st, "gs-2", 0); !game.IsKind(err, game.NotFound) {
			t.Errorf("second claim: %v, want NotFound", err)
		}
	})
}

func TestClaimRespectsActivationCap(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		putProcs(t, st, proc("c1", 1), proc("c1", 2), proc("c2", 3))
		p, err := claim(st, "gs-1", 1)
		if err != nil || p.ComputeName != "c1" {
			t.Fatalf("claim = %+v, %v", p, err)
		}
		gs := session(1)
		gs.ID, gs.Status, gs.ComputeName = "gs-1", game.SessionActivating, "c1"
		Update(t, st, func(tx store.Tx) error { return tx.InsertGameSession(gs) })
		if p, err = claim(st, "gs-2", 1); err != nil || p.ComputeName != "c2" {
			t.Fatalf("with c1 activating one: %+v, %v; want c2", p, err)
		}
		if p, err = claim(st, "gs-3", 2); err != nil || p.PID != "p002" {
			t.Fatalf("cap 2: %+v, %v; want p002", p, err)
		}
	})
}

func TestConcurrentClaimsNeverShareAProcess(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		var ps []*game.Process
		for i := range 5 {
			ps = append(ps, proc("c1", i))
		}
		putProcs(t, st, ps...)
		var mu sync.Mutex
		got := map[string]string{}
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				gs := fmt.Sprintf("gs-%d", i)
				for {
					p, err := claim(st, gs, 0)
					if game.IsKind(err, game.NotFound) {
						return
					}
					if err != nil {
						continue // a serialization failure: try again
					}
					mu.Lock()
					if prev, ok := got[p.PID]; ok {
						t.Errorf("%s claimed by %s and %s", p.PID, prev, gs)
					}
					got[p.PID] = gs
					mu.Unlock()
					return
				}
			})
		}
		wg.Wait()
		if len(got) != 5 {
			t.Errorf("%d processes claimed, want 5", len(got))
		}
	})
}

func TestListProcessesPages(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		for i := range 7 {
			p := proc("c1", i)
			if i == 3 {
				p.Status = game.ProcessTerminated
			}
			putProcs(t, st, p)
		}
		other := proc("c9", 9)
		other.FleetID = "fleet-b"
		putProcs(t, st, other)
		var seen []string
		token := ""
		for {
			var list []*game.Process
			var next string
			View(t, st, func(tx store.Tx) error {
				var err error
				list, next, err = tx.ListProcesses("fleet-a", "", store.Page{Limit: 2, Token: token})
				return err
			})
			for _, p := range list {
				seen = append(seen, p.PID)
			}
			if next == "" {
				break
			}
			token = next
		}
		if fmt.Sprint(seen) != "[p000 p001 p002 p004 p005 p006]" {
			t.Errorf("pages = %v", seen)
		}
		View(t, st, func(tx store.Tx) error {
			list, _, err := tx.ListProcesses("", game.ProcessTerminated, store.Page{})
			if err == nil && (len(list) != 1 || list[0].PID != "p003") {
				t.Errorf("TERMINATED = %v", list)
			}
			all, _, err := tx.ListProcesses("", "", store.Page{})
			if err == nil && len(all) != 7 {
				t.Errorf("all fleets: %d", len(all))
			}
			return err
		})
	})
}

func TestStaleAndActiveProcesses(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := t0.Add(time.Hour)
		fresh, dropped, silent, expiring, ended, connecting := proc("c1", 1), proc("c1", 2), proc("c1", 3), proc("c1", 4), proc("c1", 5), proc("c1", 6)
		for _, p := range []*game.Process{fresh, dropped, silent, expiring, ended, connecting} {
			p.LastHealthy, p.TokenExpires = now, now.Add(10*time.Minute)
		}
		dropped.Connected, dropped.DisconnectedAt = false, now.Add(-time.Minute)
		silent.LastHealthy = now.Add(-4 * time.Minute)
		expiring.TokenExpires = now.Add(time.Minute)
		ended.Status, ended.Connected, ended.DisconnectedAt = game.ProcessTerminated, false, now.Add(-time.Hour)
		connecting.Status, connecting.LastHealthy = game.ProcessConnected, now.Add(-time.Hour)
		other := proc("c1", 7)
		other.Location, other.LastHealthy, other.TokenExpires = "custom-b", now, now.Add(10*time.Minute)
		putProcs(t, st, fresh, dropped, silent, expiring, ended, connecting, other)
		View(t, st, func(tx store.Tx) error {
			list, err := tx.StaleProcesses(now.Add(-30*time.Second), now.Add(-3*time.Minute), now.Add(2*time.Minute), 10)
			if err != nil {
				return err
			}
			var pids []string
			for _, p := range list {
				pids = append(pids, p.PID)
			}
			if fmt.Sprint(pids) != "[p002 p003 p004]" {
				t.Errorf("StaleProcesses = %v, want [p002 p003 p004]", pids)
			}
			counts, err := tx.CountActiveProcesses("fleet-a")
			if err == nil && (counts["custom-a"] != 4 || counts["custom-b"] != 1 || len(counts) != 2) {
				t.Errorf("CountActiveProcesses = %v", counts)
			}
			return err
		})
	})
}

// NextStale answers when the first live process meets a condition of
// StaleProcesses: a grace after its disconnection, a timeout after its
// last healthy report when ACTIVE, a margin before its token expires when
// connected. Ended processes, and the conditions a process cannot meet
// (a report while not ACTIVE, a token while disconnected), count for
// nothing.
func TestNextStale(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := t0.Add(time.Hour)
		next := func() time.Time {
			var at time.Time
			View(t, st, func(tx store.Tx) error {
				var err error
				at, err = tx.NextStale(30*time.Second, 3*time.Minute, 2*time.Minute)
				return err
			})
			return at
		}
		if at := next(); !at.IsZero() {
			t.Fatalf("no process: NextStale = %v, want zero", at)
		}
		active, dropped, connecting, ended := proc("c1", 1), proc("c1", 2), proc("c1", 3), proc("c1", 4)
		active.LastHealthy, active.TokenExpires = now.Add(-time.Minute), now.Add(10*time.Minute) // due in 2 and 8 min
		dropped.LastHealthy, dropped.TokenExpires = now, now.Add(-time.Hour)                     // its token counts for nothing
		dropped.Connected, dropped.DisconnectedAt = false, now.Add(-10*time.Second)              // due in 20 s
		connecting.Status, connecting.LastHealthy = game.ProcessConnected, now.Add(-time.Hour)   // its report counts for nothing
		connecting.TokenExpires = now.Add(3 * time.Minute)                                       // due in 1 min
		ended.Status, ended.Connected, ended.DisconnectedAt = game.ProcessTerminated, false, now.Add(-time.Hour)
		ended.LastHealthy = now.Add(-time.Hour)
		putProcs(t, st, active, dropped, connecting, ended)
		for _, step := range []struct {
			change func()
			want   time.Time
		}{
			{func() {}, now.Add(20 * time.Second)},
			{func() {
				dropped.Connected, dropped.DisconnectedAt, dropped.TokenExpires = true, time.Time{}, now.Add(time.Hour)
			}, now.Add(time.Minute)},
			{func() { connecting.Status, connecting.Connected = game.ProcessTerminated, false }, now.Add(2 * time.Minute)},
			{func() { active.Status, dropped.Status = game.ProcessTerminated, game.ProcessTerminated }, time.Time{}},
		} {
			step.change()
			putProcs(t, st, active, dropped, connecting)
			if at := next(); !at.Equal(step.want) {
				t.Errorf("NextStale = %v, want %v", at, step.want)
			}
		}
	})
}
