package control

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// LiveSessions answers reads of live game sessions from memory
// (internal/live), exactly as the store would, without a transaction.
// ok false means "not from memory": the store answers instead.
type LiveSessions interface {
	Search(q store.SearchQuery, p store.Page) (list []*game.GameSession, next string, ok bool, err error)
	List(f store.SessionFilter, p store.Page) (list []*game.GameSession, next string, ok bool, err error)
}

// SetLive makes SearchGameSessions and DescribeGameSessions answer from
// l when it can. Call it before the service serves requests, and only
// with a memory every write of the store reaches (one node on SQLite).
// A memory that decides seats too (seatKeeper) takes CreatePlayerSession's
// decisions (seats.go).
func (s *Service) SetLive(l LiveSessions) { s.live = l }

// liveList answers listGameSessions from memory when it can (ok), for a
// fleet named by id or ARN or a session by id; an alias, or an empty
// fleet id (whose error fleetFor gives), is the store's to answer.
func (s *Service) liveList(q sessionQuery, f store.SessionFilter, page store.Page) (list []*game.GameSession, next string, ok bool, err error) {
	if s.live == nil || q.aliasID != nil || (q.fleetID == nil && f.ID == "") || (q.fleetID != nil && *q.fleetID == "") {
		return nil, "", false, nil
	}
	if q.fleetID != nil {
		f.FleetID = game.ResourceID(*q.fleetID, "fleet")
	}
	list, next, ok, err = s.live.List(f, page)
	if ok && err == nil && f.ID != "" && len(list) == 0 && q.token == nil {
		err = game.Errorf(game.NotFound, "game session %s not found", f.ID)
	}
	return list, next, ok, err
}

// liveSearch answers SearchGameSessions from memory when it can (ok),
// for a fleet named by id or ARN.
func (s *Service) liveSearch(in *wire.SearchGameSessionsInput, q store.SearchQuery, page store.Page) (*wire.SearchGameSessionsOutput, bool, error) {
	if s.live == nil || in.FleetId == nil || *in.FleetId == "" || in.AliasId != nil {
		return nil, false, nil
	}
	q.FleetID = game.ResourceID(*in.FleetId, "fleet")
	list, next, ok, err := s.live.Search(q, page)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := &wire.SearchGameSessionsOutput{GameSessions: make([]wire.GameSession, 0, len(list))}
	for _, gs := range list {
		out.GameSessions = append(out.GameSessions, *gameSessionOut(gs))
	}
	out.NextToken = wire.String(next)
	return out, true, nil
}
