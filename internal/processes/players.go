package processes

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// A player session's life after its reservation, as its server process
// and the reservation timer move it: accepted (ACTIVE), removed
// (COMPLETED), timed out (TIMEDOUT).

// AcceptPlayerSession marks a RESERVED player session of the game session
// ACTIVE: the server process has admitted the player. A player session
// that is unknown is NotFound; one of another game session, or not
// RESERVED (TIMEDOUT, COMPLETED, already ACTIVE), is InvalidRequest. A
// reservation that has reached its timeout is TIMEDOUT then and there,
// and refused.
func (s *Service) AcceptPlayerSession(ctx context.Context, gameSessionID, playerSessionID string) (*game.PlayerSession, error) {
	var p *game.PlayerSession
	err := s.update(ctx, func(tx store.Tx) error {
		old, err := s.playerOf(tx, gameSessionID, playerSessionID)
		if err != nil {
			return err
		}
		if old.Status != game.PlayerReserved {
			return game.Errorf(game.InvalidRequest, "player session %s is %s, not RESERVED", playerSessionID, old.Status)
		}
		now := s.clock()
		status := game.PlayerActive
		if !now.Before(old.CreationTime.Add(s.cfg.ReservationTimeout)) {
			status = game.PlayerTimedOut
		}
		p, err = tx.SetPlayerSessionStatus(playerSessionID, status, now)
		return err
	})
	if err == nil && p.Status != game.PlayerActive {
		return nil, game.Errorf(game.InvalidRequest, "player session %s timed out before it was accepted", playerSessionID)
	}
	return p, err
}

// RemovePlayerSession completes a RESERVED or ACTIVE player session of the
// game session, freeing its seat: the player left. Errors as for
// AcceptPlayerSession.
func (s *Service) RemovePlayerSession(ctx context.Context, gameSessionID, playerSessionID string) (*game.PlayerSession, error) {
	var p *game.PlayerSession
	err := s.update(ctx, func(tx store.Tx) error {
		old, err := s.playerOf(tx, gameSessionID, playerSessionID)
		if err != nil {
			return err
		}
		if !old.Occupies() {
			return game.Errorf(game.InvalidRequest, "player session %s is %s and holds no seat", playerSessionID, old.Status)
		}
		p, err = tx.SetPlayerSessionStatus(playerSessionID, game.PlayerCompleted, s.clock())
		return err
	})
	return p, err
}

// playerOf reads a player session that must belong to the game session.
func (s *Service) playerOf(tx store.Tx, gameSessionID, playerSessionID string) (*game.PlayerSession, error) {
	p, err := tx.GetPlayerSession(playerSessionID)
	if err != nil {
		return nil, err
	}
	if p.GameSessionID != gameSessionID {
		return nil, game.Errorf(game.InvalidRequest, "player session %s does not belong to game session %s", playerSessionID, gameSessionID)
	}
	return p, nil
}

// reservationBatch bounds the reservations one sweep transaction expires.
const reservationBatch = 500

// ExpireReservations is the reservation timer: RESERVED player sessions
// ReservationTimeout after their creation become TIMEDOUT, freeing seats.
func (s *Service) ExpireReservations(ctx context.Context) error {
	for {
		now := s.clock()
		var n int
		err := s.update(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.ExpireReservations(now.Add(-s.cfg.ReservationTimeout), now, reservationBatch)
			return err
		})
		if err != nil || n < reservationBatch {
			return err
		}
	}
}
