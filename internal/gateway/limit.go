package gateway

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter rate-limits requests per player: a token bucket each, kept for
// at most max players; the least recently seen is evicted first (it has
// the fullest bucket anyway, having been idle longest).
type limiter struct {
	rate  rate.Limit
	burst int
	max   int
	now   func() time.Time

	mu    sync.Mutex
	order *list.List // of *bucket, most recent at the front
	byID  map[string]*list.Element
}

type bucket struct {
	player string
	lim    *rate.Limiter
}

func newLimiter(perSecond float64, burst, max int, now func() time.Time) *limiter {
	return &limiter{rate: rate.Limit(perSecond), burst: burst, max: max, now: now,
		order: list.New(), byID: map[string]*list.Element{}}
}

// allow reports whether player may make a request now. A limiter with a
// rate of zero or less allows everything.
func (l *limiter) allow(player string) bool {
	if l.rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byID[player]
	if ok {
		l.order.MoveToFront(e)
	} else {
		if l.order.Len() >= l.max {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.byID, old.Value.(*bucket).player)
		}
		e = l.order.PushFront(&bucket{player: player, lim: rate.NewLimiter(l.rate, l.burst)})
		l.byID[player] = e
	}
	return e.Value.(*bucket).lim.AllowN(l.now(), 1)
}

// size is how many players are tracked.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
