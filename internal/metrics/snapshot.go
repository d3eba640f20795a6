// Package metrics measures the service from its store. A Snapshots keeps
// the latest measurement, refreshed in the background, so a scrape of
// /metrics or a console page reads memory and never waits on the store or
// on a lock the API or the process endpoint uses. History writes the
// per-minute record behind the console's graphs. Both read aggregates the
// store computes from its records, so several nodes report the same
// numbers and never count anything twice.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Sample is one value of a gauge: its name, help text, label names and
// values (in the same order).
type Sample struct {
	Name        string
	Help        string
	LabelNames  []string
	LabelValues []string
	Value       float64
}

// A Source reads one group of samples inside the snapshot's read
// transaction. Fleets are built in; queues add their own (Snapshots.Add).
type Source interface {
	Read(tx store.Tx, now time.Time) ([]Sample, error)
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(tx store.Tx, now time.Time) ([]Sample, error)

// Read implements Source.
func (f SourceFunc) Read(tx store.Tx, now time.Time) ([]Sample, error) { return f(tx, now) }

// Snapshot is one measurement. Fleets holds every fleet's metrics per
// location (transitions counted over the last complete minute).
type Snapshot struct {
	Taken   time.Time
	Samples []Sample
	Fleets  []game.FleetMetrics
}

// Snapshots refreshes a Snapshot in the background.
type Snapshots struct {
	st      store.Store
	now     func() time.Time
	log     *slog.Logger
	every   time.Duration
	timeout time.Duration

	mu      sync.Mutex // guards sources
	sources []Source

	cur      atomic.Pointer[Snapshot]
	failures atomic.Int64
}

// Options tune Snapshots; zero values take the defaults beside them.
type Options struct {
	Every   time.Duration // between refreshes (5 s)
	Timeout time.Duration // bound on one refresh's store reads (4 s)
	Now     func() time.Time
	Log     *slog.Logger
}

// NewSnapshots returns Snapshots over st with the fleet source; it starts
// nothing (Run does). Until the first refresh, Current is an empty Snapshot.
func NewSnapshots(st store.Store, o Options) *Snapshots {
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 4 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Snapshots{st: st, now: o.Now, log: o.Log, every: o.Every, timeout: o.Timeout}
	s.cur.Store(&Snapshot{})
	return s
}

// Add registers another source; its samples appear from the next refresh.
func (s *Snapshots) Add(src Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = append(s.sources, src)
}

// Current returns the latest snapshot. It never blocks.
func (s *Snapshots) Current() *Snapshot { return s.cur.Load() }

// Failures counts refreshes that failed (the previous snapshot stays).
func (s *Snapshots) Failures() int64 { return s.failures.Load() }

// Run refreshes at once and then every Options.Every until ctx ends.
func (s *Snapshots) Run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("metrics refresh failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh measures now, within the refresh timeout, and publishes the
// result; on error the previous snapshot stays current.
func (s *Snapshots) Refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	now := s.now().UTC()
	s.mu.Lock()
	sources := append([]Source(nil), s.sources...)
	s.mu.Unlock()
	snap := &Snapshot{Taken: now}
	err := s.st.View(ctx, func(tx store.Tx) error {
		fleets, err := AllFleetMetrics(tx, now.Truncate(time.Minute).Add(-time.Minute))
		if err != nil {
			return err
		}
		snap.Fleets = fleets
		snap.Samples = fleetSamples(fleets)
		for _, src := range sources {
			more, err := src.Read(tx, now)
			if err != nil {
				return err
			}
			snap.Samples = append(snap.Samples, more...)
		}
		return nil
	})
	if err != nil {
		s.failures.Add(1)
		return fmt.Errorf("measuring: %w", err)
	}
	s.cur.Store(snap)
	return nil
}

// AllFleetMetrics measures every fleet, counting transitions in the
// minute that starts at minute.
func AllFleetMetrics(tx store.Tx, minute time.Time) ([]game.FleetMetrics, error) {
	var out []game.FleetMetrics
	token := ""
	for {
		fleets, next, err := tx.ListFleets(store.Page{Limit: 100, Token: token})
		if err != nil {
			return nil, err
		}
		for _, f := range fleets {
			ms, err := tx.FleetMetrics(f, minute, minute.Add(time.Minute))
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// Prefix starts the name of every GameLift metric on /metrics:
// gamelift_ActiveGameSessions is CloudWatch's AWS/GameLift
// ActiveGameSessions (docs/decisions.md).
const Prefix = "gamelift_"

var fleetHelp = map[string]string{
	"ActiveInstances":                   "Computes registered to the fleet (a compute counts as an instance).",
	"IdleInstances":                     "Computes hosting no game session.",
	"PercentIdleInstances":              "IdleInstances / ActiveInstances, in percent.",
	"ActiveServerProcesses":             "Server processes in ACTIVE status, idle or hosting.",
	"HealthyServerProcesses":            "ACTIVE server processes whose last health report was healthy.",
	"PercentHealthyServerProcesses":     "HealthyServerProcesses / ActiveServerProcesses, in percent.",
	"ServerProcessActivations":          "Server processes that became ACTIVE in the last complete minute.",
	"ServerProcessTerminations":         "Server processes that ended in the last complete minute.",
	"ServerProcessAbnormalTerminations": "Server processes that ended abnormally (lost, crashed, unhealthy) in the last complete minute.",
	"ActivatingGameSessions":            "Game sessions in ACTIVATING status.",
	"ActiveGameSessions":                "Game sessions in ACTIVE status.",
	"AvailableGameSessions":             "ACTIVE, healthy, connected server processes hosting no game session.",
	"PercentAvailableGameSessions":      "AvailableGameSessions / (ActiveGameSessions + AvailableGameSessions + unhealthy processes), in percent.",
	"ConcurrentActivatableGameSessions": "Available game sessions that can start now under MaxConcurrentGameSessionActivations.",
	"GameSessionInterruptions":          "Game sessions that ended INTERRUPTED in the last complete minute.",
	"CurrentPlayerSessions":             "Player sessions RESERVED or ACTIVE.",
	"PlayerSessionActivations":          "Player sessions that went RESERVED to ACTIVE in the last complete minute.",
}

var fleetLabels = []string{"fleet_id", "location"}

func fleetSamples(fleets []game.FleetMetrics) []Sample {
	out := make([]Sample, 0, len(fleets)*len(game.FleetMetricNames))
	for _, m := range fleets {
		vals := m.Values()
		for _, name := range game.FleetMetricNames {
			out = append(out, Sample{Name: Prefix + name, Help: fleetHelp[name], LabelNames: fleetLabels,
				LabelValues: []string{m.FleetID, m.Location}, Value: vals[name]})
		}
	}
	return out
}
