package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// DefaultRetention is how long the per-minute history is kept.
const DefaultRetention = 14 * 24 * time.Hour

// A MinuteSource measures one group of resources for one minute of the
// history (fleets are built in; queues add their own with History.Add).
type MinuteSource interface {
	Minute(tx store.Tx, minute time.Time) ([]game.MetricMinute, error)
}

// History writes each complete minute's metrics of every fleet (per
// location) to the store and deletes minutes older than the retention.
// Any number of nodes may run it: a minute is inserted once, by whichever
// node gets there first (store.MetricsTx.InsertMetricMinutes).
type History struct {
	st        store.Store
	now       func() time.Time
	log       *slog.Logger
	retention time.Duration

	mu      sync.Mutex // guards sources and last
	sources []MinuteSource
	last    time.Time // the last minute this node recorded
}

// NewHistory returns a History; retention <= 0 means DefaultRetention.
// It starts nothing (Run does).
func NewHistory(st store.Store, retention time.Duration, now func() time.Time, log *slog.Logger) *History {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &History{st: st, now: now, log: log, retention: retention}
}

// Add registers another source of minutes.
func (h *History) Add(src MinuteSource) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sources = append(h.sources, src)
}

// Run records every 10 s (a minute is written shortly after it ends)
// until ctx ends.
func (h *History) Run(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		if err := h.Record(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("metric history failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Record writes the last complete minute, unless this node already did,
// and deletes expired minutes. Safe on several nodes at once.
func (h *History) Record(ctx context.Context) error {
	now := h.now().UTC()
	minute := now.Truncate(time.Minute).Add(-time.Minute)
	h.mu.Lock()
	done := !minute.After(h.last)
	sources := append([]MinuteSource{fleetMinutes{}}, h.sources...)
	h.mu.Unlock()
	if done {
		return nil
	}
	var rows []game.MetricMinute
	err := h.st.View(ctx, func(tx store.Tx) error {
		rows = rows[:0]
		for _, src := range sources {
			ms, err := src.Minute(tx, minute)
			if err != nil {
				return err
			}
			rows = append(rows, ms...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = h.st.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.InsertMetricMinutes(rows); err != nil {
			return err
		}
		_, err := tx.DeleteMetricMinutes(now.Add(-h.retention), 10000)
		return err
	})
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.last = minute
	h.mu.Unlock()
	return nil
}

// fleetMinutes is every fleet's minute, one row per location.
type fleetMinutes struct{}

func (fleetMinutes) Minute(tx store.Tx, minute time.Time) ([]game.MetricMinute, error) {
	fleets, err := AllFleetMetrics(tx, minute)
	if err != nil {
		return nil, err
	}
	out := make([]game.MetricMinute, 0, len(fleets))
	for _, m := range fleets {
		out = append(out, game.MetricMinute{Resource: m.FleetID, Location: m.Location, Minute: minute, Values: m.Values()})
	}
	return out, nil
}
