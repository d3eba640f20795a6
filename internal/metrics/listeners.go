package metrics

import "github.com/prometheus/client_golang/prometheus"

// Listener is what one listener of this node counts: its open
// connections and the connections it closed to make room or refused.
type Listener struct {
	Name      string // "API", "TLS", "node", "player gateway"
	HTTP      int    // open HTTP connections
	WebSocket int    // upgraded (WebSocket) connections
	// Evicted counts idle connections closed to make room, by reason;
	// Refused connections refused, by reason (the Reason constants).
	Evicted map[string]int64
	Refused map[string]int64
}

// The reasons a listener closes or refuses a connection, as label values.
const (
	ReasonFull       = "listener_full" // every connection of the listener busy, or to make room
	ReasonPerAddress = "address_full"  // the remote address holds its most connections
	ReasonRate       = "address_rate"  // the remote address opens connections too fast
	ReasonWebSockets = "websocket_cap" // the listener holds its most WebSocket connections
)

var (
	listenerConns = prometheus.NewDesc("anylift_listener_connections",
		"Connections open on this node's listener, by kind: http (counted against --max-connections) or websocket (against --max-websockets).",
		[]string{"listener", "kind"}, nil)
	listenerEvicted = prometheus.NewDesc("anylift_listener_evicted_connections_total",
		"Idle connections this node's listener closed to make room for a new one, by reason: listener_full or address_full.",
		[]string{"listener", "reason"}, nil)
	listenerRefused = prometheus.NewDesc("anylift_listener_refused_connections_total",
		"Connections or upgrades this node's listener refused, by reason: listener_full, address_full, address_rate (closed at once) or websocket_cap (503 before the upgrade).",
		[]string{"listener", "reason"}, nil)
)

// listenerCollector exports the counts of the listeners read() reports.
type listenerCollector struct{ read func() []Listener }

func (listenerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- listenerConns
	ch <- listenerEvicted
	ch <- listenerRefused
}

func (c listenerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.read() {
		ch <- prometheus.MustNewConstMetric(listenerConns, prometheus.GaugeValue, float64(l.HTTP), l.Name, "http")
		ch <- prometheus.MustNewConstMetric(listenerConns, prometheus.GaugeValue, float64(l.WebSocket), l.Name, "websocket")
		for reason, n := range l.Evicted {
			ch <- prometheus.MustNewConstMetric(listenerEvicted, prometheus.CounterValue, float64(n), l.Name, reason)
		}
		for reason, n := range l.Refused {
			ch <- prometheus.MustNewConstMetric(listenerRefused, prometheus.CounterValue, float64(n), l.Name, reason)
		}
	}
}

// AddListeners exports the listener counts read reports at each scrape
// (it must not block for long).
func (e *Exporter) AddListeners(read func() []Listener) {
	e.reg.MustRegister(listenerCollector{read})
}
