package sessions

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// seatKeeper decides reservations in memory (live.Sessions, seats.go
// there): HoldSeats checks the session's status, policy and free seats
// and holds the seats; ReleaseSeats gives back the seats of a write that
// did not commit. A memory that answers session reads (SetLive) and
// implements it decides seats too: one node on SQLite.
type seatKeeper interface {
	HoldSeats(id string, n int) (s *game.GameSession, taken int, held bool)
	ReleaseSeats(id string, n int)
}

// reserveHeld takes the seats of ps in memory and commits only what must
// be written (the seat count and the player sessions), with the fields
// the player sessions copy from the game session taken from memory. The
// seats are held from the decision to the commit, so concurrent calls
// count them taken; if the write fails they are given back before the
// caller hears the error, and a commit makes them counted in the same
// step that releases the hold (store.Change.Held). A session the memory
// does not hold live (unknown, or ended) is left to the store
// (reserveInStore), whose answers (NotFound, InvalidGameSessionStatus)
// are the reference.
func (s *Service) reserveHeld(ctx context.Context, k seatKeeper, gameSessionID string, ps []*game.PlayerSession) error {
	gs, err := s.holdSeats(ctx, k, gameSessionID, len(ps), ps[0].CreationTime)
	if err != nil {
		return err
	}
	if gs == nil {
		return s.reserveInStore(ctx, gameSessionID, ps)
	}
	for _, p := range ps {
		p.GameSessionID, p.FleetID, p.FleetARN = gs.ID, gs.FleetID, gs.FleetARN
		p.IPAddress, p.DNSName, p.Port = gs.IPAddress, gs.DNSName, gs.Port
	}
	err = s.update(ctx, func(tx store.Tx) error { return tx.AddReservations(gs.ID, ps) })
	if err != nil {
		k.ReleaseSeats(gs.ID, len(ps))
	}
	return err
}

// holdSeats holds n seats of the session in memory and returns its
// record; nil and no error when the memory does not hold the session
// live. A session not accepting players, or ended, is refused at once. A
// session the memory has ACTIVATING is left to the store: its activation
// may have committed without reaching the memory yet (the commit hook
// runs after the commit), and a reader of the store, say of the
// placement it fulfils, may already have told a client it is ACTIVE.
//
// A session with no room may still hold reservations that reached their
// timeout at, which must not keep it full. The memory holds seat counts,
// not player sessions, so it cannot tell those apart: on no room, the
// store expires the session's stale reservations (as ReserveSeats does)
// and, once that has committed and the memory counts the freed seats,
// the decision is taken once more. Keeping reservation times in memory
// instead would mean following every player session (accepted, removed,
// timed out, ended with its session) through the commit feed and loading
// the RESERVED ones at start-up, to spare one small write (an indexed
// UPDATE that mostly matches nothing) to calls on full sessions only; a
// call that finds a seat, the common case, pays nothing for it.
func (s *Service) holdSeats(ctx context.Context, k seatKeeper, id string, n int, at time.Time) (*game.GameSession, error) {
	gs, taken, held := k.HoldSeats(id, n)
	if gs == nil || held {
		return gs, nil
	}
	if gs.Status == game.SessionActivating {
		return nil, nil
	}
	if gs.Status != game.SessionActive || gs.PlayerSessionCreationPolicy != game.AcceptAll {
		return nil, store.SeatRefusal(gs, n)
	}
	err := s.update(ctx, func(tx store.Tx) error {
		_, err := tx.ExpireSessionReservations(id, at.Add(-s.cfg.ReservationTimeout), at)
		return err
	})
	if err != nil {
		return nil, err
	}
	if gs, taken, held = k.HoldSeats(id, n); gs == nil || held {
		return gs, nil
	}
	full := *gs
	full.CurrentPlayerSessionCount = taken
	return nil, store.SeatRefusal(&full, n)
}
