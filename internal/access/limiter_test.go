package access

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)}
	l := NewLimiter(Rate{PerSecond: 10, Burst: 5}, clk.Now)
	take := func(id string, own *Rate, n int) int {
		ok := 0
		for range n {
			if l.Allow(id, own) {
				ok++
			}
		}
		return ok
	}
	if got := take("a", nil, 8); got != 5 {
		t.Errorf("a burst of 8 at once: %d allowed, want 5", got)
	}
	if got := take("b", nil, 8); got != 5 {
		t.Errorf("another key's burst: %d allowed, want 5 (keys are apart)", got)
	}
	clk.Advance(100 * time.Millisecond) // one token back
	if got := take("a", nil, 3); got != 1 {
		t.Errorf("after 100 ms: %d allowed, want 1", got)
	}
	clk.Advance(10 * time.Second) // full again, no more than the burst
	if got := take("a", nil, 8); got != 5 {
		t.Errorf("after a quiet spell: %d allowed, want 5", got)
	}
	// Steady at the rate: one per 100 ms goes through indefinitely.
	for i := range 50 {
		clk.Advance(100 * time.Millisecond)
		if !l.Allow("a", nil) {
			t.Fatalf("request %d at the rate refused", i)
		}
	}
	// A key's own rate, and a rate of 0, which limits nothing.
	own := &Rate{PerSecond: 1, Burst: 2}
	if got := take("c", own, 5); got != 2 {
		t.Errorf("own rate: %d allowed, want 2", got)
	}
	if got := take("d", &Rate{}, 1000); got != 1000 {
		t.Errorf("own rate 0: %d allowed, want all", got)
	}
	off := NewLimiter(Rate{}, clk.Now)
	if got := func() int {
		n := 0
		for range 1000 {
			if off.Allow("a", nil) {
				n++
			}
		}
		return n
	}(); got != 1000 {
		t.Errorf("no default limit: %d allowed", got)
	}
}

func TestLimiterBoundsKeys(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)}
	l := NewLimiter(Rate{PerSecond: 1, Burst: 1}, clk.Now)
	for i := range maxBuckets + 10 {
		l.Allow(string(rune(i+1)), nil)
	}
	if l.count > maxBuckets+1 {
		t.Errorf("%d buckets, want at most %d", l.count, maxBuckets+1)
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	l := NewLimiter(Rate{PerSecond: 1e9, Burst: 1e6}, nil)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow("AKIDBENCH", nil)
		}
	})
}
