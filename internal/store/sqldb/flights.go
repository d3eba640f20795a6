package sqldb

import (
	"context"
	"sync"
)

// Write transactions in flight, for memories fed out of order. On
// PostgreSQL transactions commit on many connections at once and each
// hands its changes to the commit hook after its own commit, so a hook
// call may come after the hook calls of transactions that committed
// after it. Row versions (store.Change.Version) tell a memory which of two
// writes of a row is the newer; what it must remember to tell them apart
// (the versions of rows it no longer holds, a load's snapshot) it needs
// only until every transaction that could still bring an older write has
// reached the hook. Flights say when that is.
//
// Each write transaction of a DB that feeds a hook takes a ticket, in
// increasing order, before it begins, and gives it back after its hook
// has run (or it failed). Mark returns the next ticket to be given:
// every transaction begun before the call holds a lower one. Passed(m)
// reports that every transaction holding a ticket below m has ended: its
// changes have reached the hook, or never will.

// flights tracks the tickets of write transactions in flight.
type flights struct {
	mu   sync.Mutex
	next uint64
	open map[uint64]struct{}
	// wake is closed, and replaced on demand, when a transaction ends
	// while someone waits (WaitPassed).
	wake chan struct{}
}

// begin gives a transaction its ticket.
func (f *flights) begin() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		f.open = map[uint64]struct{}{}
	}
	t := f.next
	f.next++
	f.open[t] = struct{}{}
	return t
}

// end gives a ticket back.
func (f *flights) end(t uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.open, t)
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// passed reports whether no ticket below m is in flight; f.mu is held.
func (f *flights) passed(m uint64) bool {
	for t := range f.open {
		if t < m {
			return false
		}
	}
	return true
}

// Mark returns a mark of the write transactions begun so far (above).
func (db *DB) Mark() uint64 {
	db.flights.mu.Lock()
	defer db.flights.mu.Unlock()
	return db.flights.next
}

// Settled returns the lowest mark not passed: Passed(m) holds for every
// m up to it (store.Horizon).
func (db *DB) Settled() uint64 {
	f := &db.flights
	f.mu.Lock()
	defer f.mu.Unlock()
	low := f.next
	for t := range f.open {
		low = min(low, t)
	}
	return low
}

// Passed reports whether every write transaction begun before Mark
// returned m has ended, its changes handed to the hook (or failed).
func (db *DB) Passed(m uint64) bool { return m <= db.Settled() }

// WaitPassed waits until Passed(m), or ctx ends.
func (db *DB) WaitPassed(ctx context.Context, m uint64) error {
	f := &db.flights
	for {
		f.mu.Lock()
		if f.passed(m) {
			f.mu.Unlock()
			return nil
		}
		if f.wake == nil {
			f.wake = make(chan struct{})
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
