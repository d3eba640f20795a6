package sqldb

import (
	"fmt"
	"testing"
)

// The horizon keeps several observations waiting: each settles as soon as
// its own holders have ended, whatever later appenders are in flight, and
// the newest settled one settles those before it.
func TestHorizonObservationsSettleOnTheirOwnHolders(t *testing.T) {
	var h outboxHorizon
	step := func(last int64, holders []string, want int64, wantPending int) {
		t.Helper()
		h.observed(last, holders)
		if h.settled != want || len(h.pending) != wantPending {
			t.Fatalf("after (%d, %v): settled %d with %d waiting, want %d with %d", last, holders, h.settled, len(h.pending), want, wantPending)
		}
	}
	step(5, nil, 5, 0)                  // no holder: settled at once
	step(8, []string{"a"}, 5, 1)        // 6..8 wait for a
	step(10, []string{"a", "b"}, 5, 2)  // a still in flight
	step(12, []string{"b", "c"}, 8, 2)  // a ended: 8 settles, though b and c hold the later ones back
	step(12, []string{"c", "d"}, 10, 2) // b ended: 10 settles; c holds 12 back
	step(12, []string{"d"}, 12, 0)      // c ended: 12 settles (seen with b and c only), d holds nothing new
	step(15, []string{"e"}, 12, 1)      // 15 waits for e
	step(15, nil, 15, 0)                // all ended
	step(3, []string{"x"}, 15, 0)       // behind the horizon: nothing to wait for
	// A long run of observations while one appender stays in flight: the
	// oldest are dropped, which only delays the horizon.
	for i := range maxPending + 4 {
		h.observed(int64(20+i), []string{"long", fmt.Sprint("h", i)})
	}
	if len(h.pending) != maxPending || h.settled != 15 {
		t.Fatalf("settled %d with %d observations waiting, want 15 with %d", h.settled, len(h.pending), maxPending)
	}
	step(40, []string{"z"}, int64(20+maxPending+3), 1) // the long one ended: all but 40 settle
}
