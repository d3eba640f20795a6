package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The WebSocket cap (Limits.MaxWebSockets). An upgrade request takes a
// slot of its listener before its handshake is checked, so that a
// refusal costs no store read; the slot becomes an upgraded connection
// when the handler hijacks the connection, and is given back when the
// handler ends without doing so (a refused handshake). Connections
// upgraded stay whatever happens to later requests.

// limitedConnKey is the request context key of the *limitedConn a
// request arrived on.
type limitedConnKey struct{}

// withLimitedConn is the http.Server.ConnContext hook of every listener:
// it puts the connection's *limitedConn, if any, in its requests'
// context.
func withLimitedConn(ctx context.Context, c net.Conn) context.Context {
	if lc := findLimited(c); lc != nil {
		return context.WithValue(ctx, limitedConnKey{}, lc)
	}
	return ctx
}

// webSocketRetryAfter is the Retry-After of a refused upgrade, in
// seconds: the refusal is temporary.
const webSocketRetryAfter = 5

// capUpgrades admits an upgrade request to next only while its listener
// holds fewer WebSocket connections than its cap, and answers 503 with
// Retry-After otherwise. Requests on a connection no listener counts
// (tests serving a handler directly) pass.
func capUpgrades(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(limitedConnKey{}).(*limitedConn)
		if lc == nil {
			next.ServeHTTP(w, r)
			return
		}
		if !lc.beginUpgrade() {
			l := lc.l
			if n, ok := l.wsLog.note(l.now()); ok {
				l.log.Warn("WebSocket cap reached: refusing upgrades with 503 (--max-websockets)", "listener", l.name,
					"max", l.maxWS, "refused", n, "last_address", r.RemoteAddr)
			}
			w.Header().Set("Retry-After", strconv.Itoa(webSocketRetryAfter))
			http.Error(w, "service unavailable: this listener holds its most WebSocket connections; retry later", http.StatusServiceUnavailable)
			return
		}
		defer lc.abandonUpgrade()
		next.ServeHTTP(w, r)
	})
}

// beginUpgrade takes a WebSocket slot of c's listener for an upgrade
// request on c; it reports false, counting a refusal, when there is
// none.
func (c *limitedConn) beginUpgrade() bool {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.upgrade || c.upgraded {
		return true
	}
	if l.upgraded+l.upgrading >= l.maxWS {
		l.refusedWS.Add(1) // counted before the answer a client sees
		return false
	}
	l.upgrading++
	c.upgrade = true
	return true
}

// abandonUpgrade gives back the slot of an upgrade request whose handler
// ended without upgrading.
func (c *limitedConn) abandonUpgrade() {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.endUpgrade()
}

// endUpgrade gives back c's slot, if it holds one. The caller holds l.mu.
func (c *limitedConn) endUpgrade() {
	if c.upgrade {
		c.upgrade = false
		c.l.upgrading--
	}
}

// logPeriod is the least time between two log lines of a repeated
// refusal.
const logPeriod = time.Minute

// periodicLog paces the log lines of a repeated event: at most one a
// logPeriod, each with the count since the last. The zero value is ready.
type periodicLog struct {
	mu      sync.Mutex
	next    time.Time // no line before
	pending int64     // events since the last line
}

// note records one event at now; it reports whether to log a line, and
// the events since the last line, this one included.
func (p *periodicLog) note(now time.Time) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending++
	if now.Before(p.next) {
		return 0, false
	}
	n := p.pending
	p.pending = 0
	p.next = now.Add(logPeriod)
	return n, true
}
