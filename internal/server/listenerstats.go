package server

import (
	"sort"

	"github.com/anylift/anylift/internal/metrics"
)

// ConnStats counts one listener's connections.
type ConnStats struct {
	Open     int   // HTTP connections, counted against Limits.MaxConns
	Upgraded int   // WebSocket connections, counted against Limits.MaxWebSockets
	Evicted  int64 // idle connections closed to make room in the full listener, so far
	Refused  int64 // new connections closed because every one was busy

	EvictedPerIP int64 // idle connections closed to make room for a new one of their address
	RefusedPerIP int64 // new connections closed because every one of their address was busy
	RefusedRate  int64 // new connections closed because their address opened too many lately
	// RefusedWebSockets counts upgrade requests answered 503 at the
	// WebSocket cap.
	RefusedWebSockets int64
}

// Stats reports the listener's connections and what it closed so far.
func (l *limitListener) Stats() ConnStats {
	l.mu.Lock()
	st := ConnStats{Open: l.open, Upgraded: l.upgraded}
	l.mu.Unlock()
	st.Evicted, st.Refused = l.evicted.Load(), l.refused.Load()
	st.EvictedPerIP, st.RefusedPerIP = l.evictedPerIP.Load(), l.refusedPerIP.Load()
	st.RefusedRate, st.RefusedWebSockets = l.refusedRate.Load(), l.refusedWS.Load()
	return st
}

// ListenerStats reports the connections of the listener named name:
// "API", "TLS", "node" or "player gateway".
func (s *Server) ListenerStats(name string) ConnStats {
	v, ok := s.limited.Load(name)
	if !ok {
		return ConnStats{}
	}
	return v.(*limitListener).Stats()
}

// listenerMetrics reports every listener's counts for /metrics, in name
// order.
func (s *Server) listenerMetrics() []metrics.Listener {
	var out []metrics.Listener
	s.limited.Range(func(k, v any) bool {
		st := v.(*limitListener).Stats()
		out = append(out, metrics.Listener{Name: k.(string), HTTP: st.Open, WebSocket: st.Upgraded,
			Evicted: map[string]int64{metrics.ReasonFull: st.Evicted, metrics.ReasonPerAddress: st.EvictedPerIP},
			Refused: map[string]int64{metrics.ReasonFull: st.Refused, metrics.ReasonPerAddress: st.RefusedPerIP,
				metrics.ReasonRate: st.RefusedRate, metrics.ReasonWebSockets: st.RefusedWebSockets}})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
