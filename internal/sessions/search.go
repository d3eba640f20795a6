package sessions

import (
	"context"

	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// SearchGameSessions returns ACTIVE game sessions of one fleet (FleetId or
// AliasId, not both; a TERMINAL alias answers TerminalRoutingStrategy),
// optionally of one Location, that match FilterExpression, ordered by
// SortExpression (docs/search.md). Without a sort, sessions come in
// creation order (GameLift's order is then random, so callers cannot rely
// on any). Pages hold at most Limit sessions, and never more than the
// configured SearchPageSize (20 by default, GameLift's figure). A bad
// expression is InvalidRequest, naming what is wrong and where.
func (s *Service) SearchGameSessions(ctx context.Context, in *wire.SearchGameSessionsInput) (*wire.SearchGameSessionsOutput, error) {
	q, page, err := s.searchArgs(in)
	if err != nil {
		return nil, err
	}
	if out, ok, err := s.liveSearch(ctx, in, q, page); ok || err != nil {
		return out, err
	}
	return s.storeSearch(ctx, in, q, page)
}

// searchArgs parses the request's expressions (the fleet is set later)
// and bounds its page.
func (s *Service) searchArgs(in *wire.SearchGameSessionsInput) (store.SearchQuery, store.Page, error) {
	page := store.Page{Limit: int(wire.Deref(in.Limit)), Token: wire.Deref(in.NextToken)}
	if page.Limit <= 0 || page.Limit > s.cfg.SearchPageSize {
		page.Limit = s.cfg.SearchPageSize
	}
	q, err := searchQuery(in)
	return q, page, err
}

// storeSearch answers SearchGameSessions from the store.
func (s *Service) storeSearch(ctx context.Context, in *wire.SearchGameSessionsInput, q store.SearchQuery, page store.Page) (*wire.SearchGameSessionsOutput, error) {
	out := &wire.SearchGameSessionsOutput{GameSessions: []wire.GameSession{}}
	err := s.view(ctx, func(tx store.Tx) error {
		f, err := s.ctl.FleetFor(tx, wire.Deref(in.FleetId), wire.Deref(in.AliasId))
		if err != nil {
			return err
		}
		q.FleetID = f.ID
		list, next, err := tx.SearchGameSessions(q, page)
		if err != nil {
			return err
		}
		for _, gs := range list {
			out.GameSessions = append(out.GameSessions, *gameSessionOut(gs))
		}
		out.NextToken = wire.String(next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// searchQuery parses the request's expressions; the fleet is set later.
func searchQuery(in *wire.SearchGameSessionsInput) (store.SearchQuery, error) {
	q := store.SearchQuery{Location: wire.Deref(in.Location)}
	if f := wire.Deref(in.FilterExpression); f != "" {
		e, err := search.ParseFilter(f)
		if err != nil {
			return q, err
		}
		q.Filter = e
	}
	if src := wire.Deref(in.SortExpression); src != "" {
		srt, err := search.ParseSort(src)
		if err != nil {
			return q, err
		}
		q.Sort = &srt
	}
	return q, nil
}
