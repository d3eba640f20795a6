package metrics

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// seedLoad builds one fleet in two locations with 500 computes, 1000
// processes, 20000 game sessions of which 1000 are live, and 40000
// player sessions: a fleet after a busy day.
func seedLoad(b *testing.B) store.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), b.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	locs := []string{"custom-a", "custom-b"}
	f := &game.Fleet{ID: "fleet-1", ARN: "arn:fleet-1", Name: "busy", Status: game.FleetActive, Locations: locs, CreationTime: now}
	err = st.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertFleet(f); err != nil {
			return err
		}
		for c := 0; c < 500; c++ {
			comp := &game.Compute{FleetID: f.ID, Name: fmt.Sprintf("c%03d", c), Location: locs[c%2], Status: game.ComputeActive, CreationTime: now}
			if err := tx.InsertCompute(comp); err != nil {
				return err
			}
			for p := 0; p < 2; p++ {
				pr := &game.Process{FleetID: f.ID, ComputeName: comp.Name, PID: fmt.Sprint(p), Location: comp.Location,
					Status: game.ProcessActive, Healthy: true, Connected: true, CreationTime: now, ActivationTime: now}
				if err := tx.PutProcess(pr); err != nil {
					return err
				}
			}
		}
		for i := 0; i < 20000; i++ {
			at := now.Add(-time.Duration(20000-i) * time.Second)
			gs := &game.GameSession{ID: fmt.Sprintf("arn:gs/%d", i), IDString: fmt.Sprint(i), FleetID: f.ID, Location: locs[i%2],
				ComputeName: fmt.Sprintf("c%03d", i%500), Status: game.SessionActive, MaximumPlayerSessionCount: 8,
				PlayerSessionCreationPolicy: game.AcceptAll, CreationTime: at}
			if err := tx.InsertGameSession(gs); err != nil {
				return err
			}
			if err := tx.ReserveSeats(gs.ID, []*game.PlayerSession{{ID: fmt.Sprintf("ps-%d-a", i), PlayerID: "a", CreationTime: at},
				{ID: fmt.Sprintf("ps-%d-b", i), PlayerID: "b", CreationTime: at}}, at.Add(-time.Hour)); err != nil {
				return err
			}
			if i < 19000 {
				gs.Status, gs.TerminationTime = game.SessionTerminated, at.Add(time.Minute)
				if err := tx.UpdateGameSession(gs); err != nil {
					return err
				}
				if err := tx.EndPlayerSessions(gs.ID, at.Add(time.Minute)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkRefresh measures one snapshot of the busy fleet.
func BenchmarkRefresh(b *testing.B) {
	snaps := NewSnapshots(seedLoad(b), Options{})
	b.ResetTimer()
	for b.Loop() {
		if err := snaps.Refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrape measures one /metrics answer from the snapshot.
func BenchmarkScrape(b *testing.B) {
	snaps := NewSnapshots(seedLoad(b), Options{})
	if err := snaps.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	h := NewExporter(snaps, func() int { return 0 }).Handler()
	b.ResetTimer()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	}
}
