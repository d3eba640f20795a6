package testclock_test

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/testclock"
)

// TestWakeFiresOnlyWhenAdvanced: a timer ahead of the clock waits for
// Advance to reach it; one already due fires at once.
func TestWakeFiresOnlyWhenAdvanced(t *testing.T) {
	var c testclock.Offset
	at := c.Now().Add(time.Hour)
	later := c.Wake(at)
	c.Advance(30 * time.Minute)
	select {
	case <-later:
		t.Fatal("fired half way")
	default:
	}
	c.Advance(31 * time.Minute)
	select {
	case now := <-later:
		if now.Before(at) {
			t.Fatalf("fired at %v, before %v", now, at)
		}
	default:
		t.Fatal("did not fire once reached")
	}
	select {
	case <-c.Wake(at):
	default:
		t.Fatal("a timer already due did not fire at once")
	}
}
