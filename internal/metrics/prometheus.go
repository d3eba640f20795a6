package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/anylift/anylift/internal/wire"
)

// Exporter serves /metrics: the current snapshot's gauges, per-operation
// request counts and latencies, and the process connections of this node.
type Exporter struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewExporter exports snaps; connections reports this node's open process
// connections (it must not block).
func NewExporter(snaps *Snapshots, connections func() int) *Exporter {
	e := &Exporter{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anylift_api_requests_total",
			Help: "Control-plane API requests answered by this node, by operation and result code (OK or the exception name).",
		}, []string{"operation", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "anylift_api_request_duration_seconds",
			Help:    "Time to answer a control-plane API request on this node, by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operation"}),
	}
	e.reg.MustRegister(e.requests, e.latency, snapshotCollector{snaps},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "anylift_sdk_connected_processes",
			Help: "Server process WebSocket connections open on this node.",
		}, func() float64 { return float64(connections()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "anylift_metrics_refresh_failures_total",
			Help: "Measurements of the store that failed; the previous snapshot stayed current.",
		}, func() float64 { return float64(snaps.Failures()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return e
}

// Observe records one API request; it is the API's Observer. Operations
// outside GameLift's model (any string a client sends) are counted as
// "unknown", so callers cannot grow the label set.
func (e *Exporter) Observe(op, code string, elapsed time.Duration) {
	if _, modeled := wire.OperationErrors[op]; !modeled {
		op = "unknown"
	}
	e.requests.WithLabelValues(op, code).Inc()
	e.latency.WithLabelValues(op).Observe(elapsed.Seconds())
}

// Handler serves the Prometheus text format.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is the exporter's registry, for tests and extra collectors.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// snapshotCollector turns the current snapshot into constant metrics. It
// is unchecked (describes nothing), since the set of series follows the
// fleets (and queues) in the store.
type snapshotCollector struct{ snaps *Snapshots }

func (snapshotCollector) Describe(chan<- *prometheus.Desc) {}

func (c snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.snaps.Current()
	descs := map[string]*prometheus.Desc{}
	for _, s := range snap.Samples {
		d := descs[s.Name]
		if d == nil {
			d = prometheus.NewDesc(s.Name, s.Help, s.LabelNames, nil)
			descs[s.Name] = d
		}
		m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, s.Value, s.LabelValues...)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(d, err)
			continue
		}
		ch <- m
	}
	if !snap.Taken.IsZero() {
		ch <- prometheus.MustNewConstMetric(snapshotAge, prometheus.GaugeValue, float64(snap.Taken.Unix()))
	}
}

var snapshotAge = prometheus.NewDesc("anylift_metrics_snapshot_timestamp_seconds",
	"When the store measurement behind the gamelift_* gauges was taken (Unix seconds).", nil, nil)
