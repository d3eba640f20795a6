package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/console"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/metrics"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
)

// observability is what operators look at: the metric snapshot behind
// /metrics, the per-minute history, and the console.
type observability struct {
	snaps    *metrics.Snapshots
	history  *metrics.History
	exporter *metrics.Exporter
	console  *console.Console
}

func newObservability(cfg Config, st store.Store, svc *control.Service, ss *sessions.Service, cp *computes.Service, qs *queueing.Service, hub *sdkserver.Server, keys *access.Keyring) *observability {
	o := &observability{
		snaps:   metrics.NewSnapshots(st, metrics.Options{Now: cfg.Now, Log: cfg.Log}),
		history: metrics.NewHistory(st, cfg.MetricsRetention, cfg.Now, cfg.Log),
	}
	o.snaps.Add(metrics.QueueSource)
	o.history.Add(metrics.QueueMinutes{})
	o.exporter = metrics.NewExporter(o.snaps, hub.Connections)
	o.console = console.New(console.Config{Store: st, Service: svc, Sessions: ss, Computes: cp, Queues: qs, Snapshots: o.snaps,
		Keys: keys, AnyCredentials: cfg.AnyCredentials, Now: cfg.Now, Log: cfg.Log})
	return o
}

// run starts the snapshot and history loops; wg waits for them.
func (o *observability) run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		o.snaps.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		o.history.Run(ctx)
	}()
}

// mount serves /metrics and /console on mux.
func (o *observability) mount(mux *http.ServeMux) {
	mux.Handle("GET /metrics", o.exporter.Handler())
	mux.Handle("/console", o.console)
	mux.Handle("/console/", o.console)
}

// Snapshots is the metric snapshot, for tests and other areas' sources.
func (s *Server) Snapshots() *metrics.Snapshots { return s.obs.snaps }

// History is the per-minute metric history writer.
func (s *Server) History() *metrics.History { return s.obs.history }

// Console is the web console, where other areas add pages.
func (s *Server) Console() *console.Console { return s.obs.console }
