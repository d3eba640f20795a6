package sessions

import (
	"context"

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
	// SearchEncoded and ListEncoded are Search and List giving each
	// session as its answer encoded in protocol proto, which the memory
	// builds with enc (EncodeGameSession) once and keeps until the
	// session changes.
	SearchEncoded(q store.SearchQuery, p store.Page, proto wire.Protocol, enc SessionEncoder) (list wire.EncodedList[wire.GameSession], next string, ok bool, err error)
	ListEncoded(f store.SessionFilter, p store.Page, proto wire.Protocol, enc SessionEncoder) (list wire.EncodedList[wire.GameSession], next string, ok bool, err error)
}

// SessionEncoder writes a session's answer in a protocol; EncodeGameSession
// is the one the service gives the memory.
type SessionEncoder = func(gs *game.GameSession, p wire.Protocol) (wire.Encoded[wire.GameSession], error)

// SetLive makes SearchGameSessions and DescribeGameSessions answer from
// l when it can. Call it before the service serves requests, and only
// with a memory every write of the fleets it answers for reaches (one
// node on SQLite; the fleets a node owns on PostgreSQL, internal/owned).
// A memory that decides seats too (seatKeeper) takes CreatePlayerSession's
// decisions (seats.go).
func (s *Service) SetLive(l LiveSessions) { s.live = l }

// liveList answers listGameSessions from memory when it can (ok), for a
// fleet named by id or ARN or a session by id; an alias, or an empty
// fleet id (whose error FleetFor gives), is the store's to answer.
func (s *Service) liveList(q sessionQuery, f store.SessionFilter, page store.Page) (list []*game.GameSession, next string, ok bool, err error) {
	if f, ok = s.liveFilter(q, f); !ok {
		return nil, "", false, nil
	}
	list, next, ok, err = s.live.List(f, page)
	return list, next, ok, liveNotFound(q, f, len(list), ok, err)
}

// liveFilter returns f as the memory is asked it (the fleet by id), and
// whether the memory may answer q: a fleet named by id or ARN, or a
// session by id; an alias, or an empty fleet id (whose error FleetFor
// gives), is the store's to answer.
func (s *Service) liveFilter(q sessionQuery, f store.SessionFilter) (store.SessionFilter, bool) {
	if s.live == nil || q.aliasID != nil || (q.fleetID == nil && f.ID == "") || (q.fleetID != nil && *q.fleetID == "") {
		return f, false
	}
	if q.fleetID != nil {
		f.FleetID = game.ResourceID(*q.fleetID, "fleet")
	}
	return f, true
}

// liveNotFound is err, or NotFound when the memory answered a describe of
// one session by id with none.
func liveNotFound(q sessionQuery, f store.SessionFilter, n int, ok bool, err error) error {
	if ok && err == nil && f.ID != "" && n == 0 && q.token == nil {
		return game.Errorf(game.NotFound, "game session %s not found", f.ID)
	}
	return err
}

// liveSearch answers SearchGameSessions from memory when it can (ok),
// for a fleet named by id or ARN, or by an alias, which is resolved in the
// store first (its errors are the store search's: NotFound, a terminal
// alias).
func (s *Service) liveSearch(ctx context.Context, in *wire.SearchGameSessionsInput, q store.SearchQuery, page store.Page) (*wire.SearchGameSessionsOutput, bool, error) {
	q, ok, err := s.liveQuery(ctx, in, q)
	if !ok || err != nil {
		return nil, ok, err
	}
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

// liveQuery returns q as the memory is asked it (the fleet by id), and
// whether the memory may answer it: a fleet named by id or ARN, or by a
// SIMPLE alias, resolved here in the store (an unknown or terminal alias
// is its error). A request naming both a fleet and an alias is left to
// the store's search, which refuses it.
func (s *Service) liveQuery(ctx context.Context, in *wire.SearchGameSessionsInput, q store.SearchQuery) (store.SearchQuery, bool, error) {
	fleetID, aliasID := wire.Deref(in.FleetId), wire.Deref(in.AliasId)
	switch {
	case s.live == nil || (fleetID == "") == (aliasID == ""):
		return q, false, nil
	case fleetID != "":
		q.FleetID = game.ResourceID(fleetID, "fleet")
		return q, true, nil
	}
	err := s.view(ctx, func(tx store.Tx) error {
		id, err := s.ctl.AliasFleet(tx, aliasID)
		q.FleetID = id
		return err
	})
	return q, err == nil, err
}
