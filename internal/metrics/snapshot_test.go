package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// gatedStore is a real store whose reads wait at a gate while it is
// closed: a store under a long write or lock, as the snapshot sees it.
type gatedStore struct {
	store.Store
	entered chan struct{} // receives when a read reaches the gate
	gate    chan struct{} // closed: reads pass
}

func (g *gatedStore) View(ctx context.Context, fn func(store.Tx) error) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.View(ctx, fn)
}

func seeded(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	err = st.Update(context.Background(), func(tx store.Tx) error {
		return tx.InsertFleet(&game.Fleet{ID: "fleet-1", ARN: "arn:fleet-1", Name: "one", Status: game.FleetActive,
			Locations: []string{"custom-a"}, CreationTime: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestScrapeWhileStoreIsStuck: while a refresh waits on the store, a
// scrape answers at once from the previous snapshot.
func TestScrapeWhileStoreIsStuck(t *testing.T) {
	g := &gatedStore{Store: seeded(t), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	snaps := NewSnapshots(g, Options{Timeout: time.Hour})
	close(g.gate)
	if err := snaps.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.gate = make(chan struct{}) // the store is stuck from now on
	<-g.entered                  // drain the first refresh's signal
	done := make(chan error)
	go func() { done <- snaps.Refresh(context.Background()) }()
	<-g.entered // the refresh is waiting on the store

	exp := NewExporter(snaps, func() int { return 3 })
	rec := httptest.NewRecorder()
	exp.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), `gamelift_ActiveGameSessions{fleet_id="fleet-1",location="custom-a"} 0`) ||
		!strings.Contains(string(body), "anylift_sdk_connected_processes 3") {
		t.Fatalf("scrape during a stuck refresh:\n%s", body)
	}
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRefreshIsBounded: a refresh gives up at its timeout, keeps the
// previous snapshot and counts the failure.
func TestRefreshIsBounded(t *testing.T) {
	g := &gatedStore{Store: seeded(t), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	snaps := NewSnapshots(g, Options{Timeout: time.Millisecond})
	err := snaps.Refresh(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Refresh = %v, want a deadline error", err)
	}
	if snaps.Failures() != 1 || !snaps.Current().Taken.IsZero() {
		t.Fatalf("failures %d, snapshot %+v", snaps.Failures(), snaps.Current())
	}
}

// TestSourcesAddSamples: another area's source (queues) appears on the
// next refresh, in the same read transaction.
func TestSourcesAddSamples(t *testing.T) {
	snaps := NewSnapshots(seeded(t), Options{})
	snaps.Add(SourceFunc(func(tx store.Tx, now time.Time) ([]Sample, error) {
		return []Sample{{Name: Prefix + "QueueDepth", Help: "Placements waiting.", LabelNames: []string{"queue"},
			LabelValues: []string{"q1"}, Value: 4}}, nil
	}))
	if err := snaps.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	NewExporter(snaps, func() int { return 0 }).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `gamelift_QueueDepth{queue="q1"} 4`) {
		t.Fatalf("no queue sample:\n%s", rec.Body.String())
	}
}

// TestHistoryRetention: recording deletes minutes older than the
// retention and keeps the rest.
func TestHistoryRetention(t *testing.T) {
	st := seeded(t)
	now := time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)
	old := []game.MetricMinute{
		{Resource: "fleet-1", Location: "custom-a", Minute: now.Add(-2 * time.Hour).Truncate(time.Minute), Values: map[string]float64{}},
		{Resource: "fleet-1", Location: "custom-a", Minute: now.Add(-30 * time.Minute).Truncate(time.Minute), Values: map[string]float64{}},
	}
	if err := st.Update(context.Background(), func(tx store.Tx) error { _, err := tx.InsertMetricMinutes(old); return err }); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(st, time.Hour, func() time.Time { return now }, nil)
	if err := h.Record(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []game.MetricMinute
	st.View(context.Background(), func(tx store.Tx) (err error) {
		got, err = tx.MetricMinutes("fleet-1", "", now.Add(-3*time.Hour), now, 100)
		return err
	})
	if len(got) != 2 || !got[0].Minute.Equal(old[1].Minute) || !got[1].Minute.Equal(now.Truncate(time.Minute).Add(-time.Minute)) {
		t.Fatalf("after recording: %+v", got)
	}
}

// TestUnknownOperationsShareOneLabel: operation names clients invent,
// valid UTF-8 or not, never become labels.
func TestUnknownOperationsShareOneLabel(t *testing.T) {
	exp := NewExporter(NewSnapshots(seeded(t), Options{}), func() int { return 0 })
	for _, op := range []string{"\xff\xfe", "NoSuchOperation", "CreateGameSession"} {
		exp.Observe(op, "OK", time.Millisecond)
	}
	rec := httptest.NewRecorder()
	exp.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if !strings.Contains(body, `anylift_api_requests_total{code="OK",operation="unknown"} 2`) ||
		!strings.Contains(body, `anylift_api_requests_total{code="OK",operation="CreateGameSession"} 1`) {
		t.Fatalf("requests:\n%s", body)
	}
}
