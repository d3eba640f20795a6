package live

import (
	"sync"

	"github.com/anylift/anylift/internal/game"
)

// Seats decided in memory. A reservation (CreatePlayerSession) is decided
// here, against the session's status, policy and free seats as of the
// last commit, and its seats are held until its write commits or fails:
//
//   - HoldSeats checks and holds, so every later decision counts the
//     held seats as taken. Readers never see a hold: searches and
//     describes count the committed seats only.
//   - When the write commits, its change (store.Change with Held) sets
//     the committed count and releases the hold in one step under the
//     write lock, before the caller hears yes: the seats pass from held
//     to counted with no moment where they are counted twice or not at
//     all.
//   - When the write fails, its caller gives the seats back with
//     ReleaseSeats before it answers: nobody saw them taken but other
//     reservations decided meanwhile, which may have been refused for
//     want of a seat, as any call racing another may be.
//
// Locks: the hold counts are guarded by holds.mu, which is taken after
// l.mu (read or write), never before. HoldSeats holds l.mu's read lock
// over the check and the hold, so the committed count it reads cannot
// change under it; Apply changes counts under the write lock.

// holds are the seats held by reservations not yet committed, by game
// session id. Keyed by id rather than held in the entry, since a change
// to the session replaces its entry.
type holds struct {
	mu sync.Mutex
	n  map[string]int
}

// HoldSeats decides a reservation of n seats in game session id. When
// the session is ACTIVE, accepts new players and has n seats neither
// counted nor held, it holds them and answers held true. s is the
// session's record (never changed: the fields a player session copies
// from it can be read freely); nil when the memory does not hold the
// session live (unknown or ended: the store must decide). taken is the
// seats counted and held at the moment of the decision.
func (l *Sessions) HoldSeats(id string, n int) (s *game.GameSession, taken int, held bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e := l.byID[id]
	if e == nil || !e.fleet.answers() {
		return nil, 0, false
	}
	l.holds.mu.Lock()
	defer l.holds.mu.Unlock()
	taken = int(e.cur) + l.holds.n[id]
	if e.s.Status != game.SessionActive || e.s.PlayerSessionCreationPolicy != game.AcceptAll || taken+n > int(e.max) {
		return e.s, taken, false
	}
	if l.holds.n == nil {
		l.holds.n = map[string]int{}
	}
	l.holds.n[id] += n
	return e.s, taken + n, true
}

// ReleaseSeats gives back n seats that HoldSeats held in session id for
// a write that did not commit. A write that committed releases its own
// through its change (store.Change.Held); releasing those again would
// free seats that are taken.
func (l *Sessions) ReleaseSeats(id string, n int) {
	l.holds.mu.Lock()
	defer l.holds.mu.Unlock()
	l.holds.release(id, n)
}

// release gives back n held seats of session id; never below none.
// Caller holds h.mu.
func (h *holds) release(id string, n int) {
	left := h.n[id] - n
	if left <= 0 {
		delete(h.n, id)
		return
	}
	h.n[id] = left
}

// counted releases the holds of committed changes; Apply calls it under
// the write lock, with the seat counts they set.
func (h *holds) counted(id string, n int) {
	if n == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.release(id, n)
}
