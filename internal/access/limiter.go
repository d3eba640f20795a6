package access

import (
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a rate and a burst, given by flags or per key.
const (
	MaxRate  = 1e9
	MaxBurst = 1 << 30
)

// Rate is a rate limit: PerSecond requests per second on average (0: no
// limit), up to Burst at once after a quiet spell.
type Rate struct {
	PerSecond float64
	Burst     int
}

// maxBuckets bounds the keys tracked. Only keys whose signature verified
// reach the limiter, so this matters only when any key is accepted
// (local development); keys beyond it share one bucket.
const maxBuckets = 1 << 16

// Limiter limits the requests of each access key with a token bucket,
// kept as the generic cell rate algorithm: one atomic "theoretical
// arrival time" per key, so the check takes no lock and no allocation
// once a key has been seen.
type Limiter struct {
	def  Rate
	now  func() time.Time
	base time.Time

	mu      sync.Mutex // guards adding buckets
	buckets sync.Map   // key id → *bucket
	count   int
}

type bucket struct {
	tat atomic.Int64 // nanoseconds since base when the bucket is full again
}

// NewLimiter returns a limiter whose keys get def unless they carry their
// own rate. now is the clock (time.Now when nil).
func NewLimiter(def Rate, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{def: def, now: now, base: now()}
}

// Allow reports whether the key id may make a request now, under own
// (the key's rate) or the limiter's default when own is nil; a request
// allowed uses up one token. A rate of 0 allows everything.
func (l *Limiter) Allow(id string, own *Rate) bool {
	r := l.def
	if own != nil {
		r = *own
	}
	if r.PerSecond <= 0 {
		return true
	}
	interval := int64(float64(time.Second) / r.PerSecond)
	burst := int64(max(r.Burst, 1))
	return l.bucket(id).take(int64(l.now().Sub(l.base)), interval, burst*interval)
}

func (l *Limiter) bucket(id string) *bucket {
	if b, ok := l.buckets.Load(id); ok {
		return b.(*bucket)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Load(id); ok {
		return b.(*bucket)
	}
	if l.count >= maxBuckets {
		id = "" // the shared bucket of keys beyond the bound
		if b, ok := l.buckets.Load(id); ok {
			return b.(*bucket)
		}
	}
	b := &bucket{}
	b.tat.Store(int64(l.now().Sub(l.base)))
	l.buckets.Store(id, b)
	l.count++
	return b
}

// take spends a token at now when the bucket holds one: the theoretical
// arrival time moves on by interval, and may run ahead of now by at
// most limit (the burst's worth of intervals).
func (b *bucket) take(now, interval, limit int64) bool {
	for {
		tat := b.tat.Load()
		next := max(tat, now) + interval
		if next-now > limit {
			return false
		}
		if b.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}
