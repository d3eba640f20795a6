package sessions

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// The API answers SearchGameSessions and DescribeGameSessions with their
// sessions already encoded in the caller's protocol: from memory, each
// live session's answer is encoded once and kept until the session
// changes, so a page is written without encoding its sessions again.
// wire.Encode writes these outputs exactly as the ordinary ones.

// EncodeGameSession is a session's answer in protocol p: its wire shape,
// encoded. The memory keeps what it returns (LiveSessions).
func EncodeGameSession(gs *game.GameSession, p wire.Protocol) (wire.Encoded[wire.GameSession], error) {
	return wire.EncodeValue(p, gameSessionOut(gs))
}

// SearchGameSessionsEncoded is SearchGameSessions answering in protocol p
// with its sessions encoded: from memory the ones the sessions keep, from
// the store each encoded now.
func (s *Service) SearchGameSessionsEncoded(ctx context.Context, in *wire.SearchGameSessionsInput, p wire.Protocol) (*wire.SearchGameSessionsEncoded, error) {
	q, page, err := s.searchArgs(in)
	if err != nil {
		return nil, err
	}
	lq, ok, err := s.liveQuery(ctx, in, q)
	if err != nil {
		return nil, err
	}
	if ok {
		list, next, ok, err := s.live.SearchEncoded(lq, page, p, EncodeGameSession)
		if err != nil {
			return nil, err
		}
		if ok {
			return &wire.SearchGameSessionsEncoded{GameSessions: list, NextToken: wire.String(next)}, nil
		}
	}
	out, err := s.storeSearch(ctx, in, q, page)
	if err != nil {
		return nil, err
	}
	list, err := encodeShapes(out.GameSessions, p)
	if err != nil {
		return nil, err
	}
	return &wire.SearchGameSessionsEncoded{GameSessions: list, NextToken: out.NextToken}, nil
}

// DescribeGameSessionsEncoded is DescribeGameSessions answering in
// protocol p with its sessions encoded, as SearchGameSessionsEncoded.
func (s *Service) DescribeGameSessionsEncoded(ctx context.Context, in *wire.DescribeGameSessionsInput, p wire.Protocol) (*wire.DescribeGameSessionsEncoded, error) {
	q := sessionQuery{in.FleetId, in.AliasId, in.GameSessionId, in.Location, in.StatusFilter, in.Limit, in.NextToken}
	f, page, err := sessionArgs(q)
	if err != nil {
		return nil, err
	}
	if lf, ok := s.liveFilter(q, f); ok {
		list, next, ok, err := s.live.ListEncoded(lf, page, p, EncodeGameSession)
		if err = liveNotFound(q, lf, len(list), ok, err); err != nil {
			return nil, err
		}
		if ok {
			return &wire.DescribeGameSessionsEncoded{GameSessions: list, NextToken: wire.String(next)}, nil
		}
	}
	records, next, err := s.storeList(ctx, q, f, page)
	if err != nil {
		return nil, err
	}
	list := make(wire.EncodedList[wire.GameSession], len(records))
	for i, gs := range records {
		if list[i], err = EncodeGameSession(gs, p); err != nil {
			return nil, err
		}
	}
	return &wire.DescribeGameSessionsEncoded{GameSessions: list, NextToken: wire.String(next)}, nil
}

// encodeShapes encodes each session shape in protocol p.
func encodeShapes(shapes []wire.GameSession, p wire.Protocol) (wire.EncodedList[wire.GameSession], error) {
	list := make(wire.EncodedList[wire.GameSession], len(shapes))
	for i := range shapes {
		var err error
		if list[i], err = wire.EncodeValue(p, &shapes[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}
