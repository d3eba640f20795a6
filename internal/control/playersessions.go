package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// CreatePlayerSession reserves a seat for one player in an ACTIVE game
// session that accepts players. Errors: NotFound,
// InvalidGameSessionStatus (not ACTIVE, or DENY_ALL), GameSessionFull.
func (s *Service) CreatePlayerSession(ctx context.Context, in *wire.CreatePlayerSessionInput) (*wire.CreatePlayerSessionOutput, error) {
	ps := []*game.PlayerSession{s.newPlayerSession(*in.PlayerId, wire.Deref(in.PlayerData))}
	if err := s.reserve(ctx, *in.GameSessionId, ps); err != nil {
		return nil, err
	}
	out := playerSessionOut(ps[0])
	return &wire.CreatePlayerSessionOutput{PlayerSession: &out}, nil
}

// CreatePlayerSessions reserves a seat for each of PlayerIds, all or
// nothing, as CreatePlayerSession does. PlayerDataMap entries for players
// not in PlayerIds are ignored.
func (s *Service) CreatePlayerSessions(ctx context.Context, in *wire.CreatePlayerSessionsInput) (*wire.CreatePlayerSessionsOutput, error) {
	ps := make([]*game.PlayerSession, 0, len(in.PlayerIds))
	for _, id := range in.PlayerIds {
		ps = append(ps, s.newPlayerSession(id, in.PlayerDataMap[id]))
	}
	if err := s.reserve(ctx, *in.GameSessionId, ps); err != nil {
		return nil, err
	}
	out := &wire.CreatePlayerSessionsOutput{PlayerSessions: []wire.PlayerSession{}}
	for _, p := range ps {
		out.PlayerSessions = append(out.PlayerSessions, playerSessionOut(p))
	}
	return out, nil
}

func (s *Service) newPlayerSession(playerID, data string) *game.PlayerSession {
	return &game.PlayerSession{
		ID:           game.NewPlayerSessionID(),
		PlayerID:     playerID,
		CreationTime: s.clock(),
		Status:       game.PlayerReserved,
		PlayerData:   data,
	}
}

// reserve takes the seats of ps (fresh RESERVED player sessions created
// at one time) in game session gameSessionID, all or nothing: decided in
// memory where the memory decides seats (reserveHeld), otherwise in the
// store (reserveInStore). Errors: NotFound, InvalidGameSessionStatus,
// GameSessionFull, or the store's failure.
func (s *Service) reserve(ctx context.Context, gameSessionID string, ps []*game.PlayerSession) error {
	if k, ok := s.live.(seatKeeper); ok {
		return s.reserveHeld(ctx, k, gameSessionID, ps)
	}
	return s.reserveInStore(ctx, gameSessionID, ps)
}

// reserveInStore takes the seats in one transaction that decides in SQL;
// reservations of the session that have reached the timeout are released
// first.
func (s *Service) reserveInStore(ctx context.Context, gameSessionID string, ps []*game.PlayerSession) error {
	expire := ps[0].CreationTime.Add(-s.cfg.ReservationTimeout)
	return s.update(ctx, func(tx store.Tx) error {
		return tx.ReserveSeats(gameSessionID, ps, expire)
	})
}

// DescribePlayerSessions lists player sessions by exactly one of
// PlayerSessionId, GameSessionId and PlayerId. PlayerSessionStatusFilter
// must be a player session status, but filters only the GameSessionId form;
// Limit and NextToken are ignored with
// PlayerSessionId. An unknown PlayerSessionId or GameSessionId is NotFound.
func (s *Service) DescribePlayerSessions(ctx context.Context, in *wire.DescribePlayerSessionsInput) (*wire.DescribePlayerSessionsOutput, error) {
	f := store.PlayerFilter{ID: wire.Deref(in.PlayerSessionId), GameSessionID: wire.Deref(in.GameSessionId), PlayerID: wire.Deref(in.PlayerId)}
	if err := checkPlayerFilter(&f, wire.Deref(in.PlayerSessionStatusFilter)); err != nil {
		return nil, err
	}
	page := store.Page{Limit: int(wire.Deref(in.Limit)), Token: wire.Deref(in.NextToken)}
	if f.ID != "" {
		page = store.Page{Limit: 1}
	}
	out := &wire.DescribePlayerSessionsOutput{PlayerSessions: []wire.PlayerSession{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if f.GameSessionID != "" {
			if _, err := tx.GetGameSession(f.GameSessionID); err != nil {
				return err
			}
		}
		list, next, err := tx.ListPlayerSessions(f, page)
		if err != nil {
			return err
		}
		if f.ID != "" && len(list) == 0 {
			return game.Errorf(game.NotFound, "player session %s not found", f.ID)
		}
		for _, p := range list {
			out.PlayerSessions = append(out.PlayerSessions, playerSessionOut(p))
		}
		out.NextToken = wire.String(next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkPlayerFilter checks that f has exactly one selector and status is
// a player session status, and keeps status for the GameSessionId form.
func checkPlayerFilter(f *store.PlayerFilter, status string) error {
	n := 0
	for _, v := range []string{f.ID, f.GameSessionID, f.PlayerID} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return game.Errorf(game.InvalidRequest, "Exactly one of PlayerSessionId, GameSessionId and PlayerId is required; %d were given", n)
	}
	if status != "" && !containsExact(wire.PlayerSessionStatusValues, status) {
		return game.Errorf(game.InvalidRequest, "PlayerSessionStatusFilter %q is not one of RESERVED, ACTIVE, COMPLETED, TIMEDOUT", status)
	}
	if f.GameSessionID != "" {
		f.Status = status
	}
	return nil
}

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

// expireReservations is the reservation timer: RESERVED player sessions
// ReservationTimeout after their creation become TIMEDOUT, freeing seats.
func (s *Service) expireReservations(ctx context.Context) error {
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
