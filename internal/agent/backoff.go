package agent

import (
	"errors"
	"time"
)

// backoff is an exponential delay: min, 2·min, 4·min... up to max.
type backoff struct {
	min, max time.Duration
	n        int // delays handed out since the last reset
}

// next returns the next delay and doubles the one after.
func (b *backoff) next() time.Duration {
	d := b.min
	for i := 0; i < b.n && d < b.max; i++ {
		d *= 2
	}
	if d > b.max {
		d = b.max
	}
	b.n++
	return d
}

func (b *backoff) reset() { b.n = 0 }

func asAPI(err error, target *interface{ ErrorCode() string }) bool {
	return err != nil && errors.As(err, target)
}
