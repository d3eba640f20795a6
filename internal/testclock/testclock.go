// Package testclock is a clock for tests of components that take a Now
// and a Wake function: real time plus an offset the test moves.
package testclock

import (
	"sync"
	"time"
)

// Offset is real time plus an offset that Advance moves; its timers fire
// only when Advance reaches them. The zero value is ready to use, and its
// methods are safe for concurrent use.
type Offset struct {
	mu     sync.Mutex
	offset time.Duration
	timers []timer
}

type timer struct {
	at time.Time
	ch chan time.Time
}

// Now is real time plus the offset.
func (c *Offset) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Wake returns a channel that receives once Advance has moved the clock
// to at (at once when it is already there).
func (c *Offset) Wake(at time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if now := time.Now().Add(c.offset); !now.Before(at) {
		ch <- now
		return ch
	}
	c.timers = append(c.timers, timer{at, ch})
	return ch
}

// Advance moves the clock by d and fires the timers it reaches.
func (c *Offset) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	now := time.Now().Add(c.offset)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if now.Before(t.at) {
			kept = append(kept, t)
			continue
		}
		t.ch <- now
	}
	c.timers = kept
}
