package storetest

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// seedMetrics builds fleet-a in custom-a and custom-b: three computes in
// custom-a (c1 hosting, c2 and c3 idle) and one in custom-b; on c1 an
// ACTIVE session with two seats taken and an ACTIVATING one, free
// processes on c2 (two) and c3 (one, unhealthy), and, in the minute
// [t0, t0+1m), a process activated, one ended abnormally, an interrupted
// session and a player who took a seat.
func seedMetrics(t *testing.T, st store.Store) *game.Fleet {
	t.Helper()
	f := &game.Fleet{ID: "fleet-a", ARN: "arn:fleet-a", Name: "a", Status: game.FleetActive, CreationTime: t0,
		Locations: []string{"custom-a", "custom-b"}, Runtime: game.RuntimeConfiguration{MaxConcurrentGameSessionActivations: 1}}
	in := t0.Add(10 * time.Second)
	Update(t, st, func(tx store.Tx) error {
		for _, c := range []*game.Compute{testCompute("fleet-a", "c1", "custom-a", t0), testCompute("fleet-a", "c2", "custom-a", t0),
			testCompute("fleet-a", "c3", "custom-a", t0), testCompute("fleet-a", "d1", "custom-b", t0)} {
			if err := tx.InsertCompute(c); err != nil {
				return err
			}
		}
		active, activating, interrupted := session(1), session(2), session(3)
		activating.Status = game.SessionActivating
		for _, s := range []*game.GameSession{active, activating, interrupted} {
			if err := tx.InsertGameSession(s); err != nil {
				return err
			}
		}
		interrupted.Status, interrupted.StatusReason, interrupted.TerminationTime = game.SessionTerminated, game.ReasonInterrupted, in
		if err := tx.UpdateGameSession(interrupted); err != nil {
			return err
		}
		if err := tx.ReserveSeats(active.ID, players(t0, "x", "y"), t0); err != nil {
			return err
		}
		_, err := tx.SetPlayerSessionStatus("psess-x", game.PlayerActive, in)
		return err
	})
	hosting, free1, free2, sick, ended := proc("c1", 1), proc("c2", 2), proc("c2", 3), proc("c3", 4), proc("c3", 5)
	hosting.GameSessionID = session(1).ID
	sick.Healthy = false
	free1.ActivationTime = in
	ended.Status, ended.TerminationTime, ended.Abnormal, ended.ActivationTime = game.ProcessTerminated, in, true, t0.Add(-time.Hour)
	putProcs(t, st, hosting, free1, free2, sick, ended)
	return f
}

func TestFleetMetrics(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		f := seedMetrics(t, st)
		var got []game.FleetMetrics
		View(t, st, func(tx store.Tx) (err error) {
			got, err = tx.FleetMetrics(f, t0, t0.Add(time.Minute))
			return err
		})
		want := []game.FleetMetrics{{
			FleetID: "fleet-a", Location: "custom-a", ActiveInstances: 3, IdleInstances: 2,
			ActiveServerProcesses: 4, HealthyServerProcesses: 3, ActivatingGameSessions: 1, ActiveGameSessions: 1,
			AvailableGameSessions: 2, ConcurrentActivatableGameSessions: 1, CurrentPlayerSessions: 2,
			ServerProcessActivations: 1, ServerProcessTerminations: 1, ServerProcessAbnormalTerminations: 1,
			PlayerSessionActivations: 1, GameSessionInterruptions: 1,
		}, {FleetID: "fleet-a", Location: "custom-b", ActiveInstances: 1, IdleInstances: 1}}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("FleetMetrics =\n%+v\nwant\n%+v", got, want)
		}
		if p := got[0].PercentAvailableGameSessions(); p != 50 { // 2 / (1 active + 2 available + 1 unhealthy)
			t.Errorf("PercentAvailableGameSessions = %v, want 50", p)
		}
		// Outside the window, only the gauges remain.
		View(t, st, func(tx store.Tx) (err error) {
			got, err = tx.FleetMetrics(f, t0.Add(time.Minute), t0.Add(2*time.Minute))
			return err
		})
		if g := got[0]; g.ServerProcessActivations+g.ServerProcessTerminations+g.PlayerSessionActivations+g.GameSessionInterruptions != 0 ||
			g.ActiveGameSessions != 1 {
			t.Errorf("next minute = %+v", g)
		}
	})
}

func TestMetricMinutes(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		minute := func(i int, loc string, v float64) game.MetricMinute {
			return game.MetricMinute{Resource: "fleet-a", Location: loc, Minute: t0.Add(time.Duration(i) * time.Minute),
				Values: map[string]float64{"ActiveGameSessions": v}}
		}
		var n int
		Update(t, st, func(tx store.Tx) (err error) {
			n, err = tx.InsertMetricMinutes([]game.MetricMinute{minute(0, "custom-a", 1), minute(1, "custom-a", 2), minute(0, "custom-b", 3)})
			return err
		})
		if n != 3 {
			t.Fatalf("inserted %d, want 3", n)
		}
		// Another node writing the same minute changes nothing.
		Update(t, st, func(tx store.Tx) (err error) {
			n, err = tx.InsertMetricMinutes([]game.MetricMinute{minute(1, "custom-a", 99), minute(2, "custom-a", 4)})
			return err
		})
		if n != 1 {
			t.Fatalf("second insert = %d, want 1", n)
		}
		View(t, st, func(tx store.Tx) error {
			all, err := tx.MetricMinutes("fleet-a", "", t0, t0.Add(time.Hour), 100)
			if err != nil {
				return err
			}
			if len(all) != 4 || all[1].Values["ActiveGameSessions"] != 2 || all[3].Location != "custom-b" ||
				!all[1].Minute.Equal(t0.Add(time.Minute)) {
				t.Errorf("MetricMinutes = %+v", all)
			}
			one, err := tx.MetricMinutes("fleet-a", "custom-a", t0.Add(time.Minute), t0.Add(2*time.Minute), 100)
			if err != nil || len(one) != 1 || one[0].Values["ActiveGameSessions"] != 2 {
				t.Errorf("MetricMinutes(custom-a, minute 1) = %+v, %v", one, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) (err error) {
			n, err = tx.DeleteMetricMinutes(t0.Add(time.Minute), 100)
			return err
		})
		if n != 2 {
			t.Errorf("deleted %d, want 2", n)
		}
	})
}
