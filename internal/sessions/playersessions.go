package sessions

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
	ps := []*game.PlayerSession{game.NewPlayerSession(*in.PlayerId, wire.Deref(in.PlayerData), s.clock())}
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
		ps = append(ps, game.NewPlayerSession(id, in.PlayerDataMap[id], s.clock()))
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
	if err := store.CheckPlayerFilter(&f, wire.Deref(in.PlayerSessionStatusFilter)); err != nil {
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
