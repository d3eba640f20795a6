package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

func (g *Gateway) serveSearch(ctx context.Context, player string, r *http.Request) (any, error) {
	req, err := decodeSearch(r.Body)
	if err != nil {
		return nil, err
	}
	return g.search(ctx, req)
}

// search runs SearchGameSessions on an allowed fleet or alias, with the
// same filter and sort grammar, limits and paging, and answers what a
// player may see of each session (no creator, no server address: a seat
// is needed for that).
func (g *Gateway) search(ctx context.Context, req *playerwire.SearchRequest) (*playerwire.SearchResult, error) {
	if err := g.checkTarget(req.FleetId, req.AliasId); err != nil {
		return nil, err
	}
	in := &wire.SearchGameSessionsInput{
		FleetId: wire.String(req.FleetId), AliasId: wire.String(req.AliasId), Location: wire.String(req.Location),
		FilterExpression: wire.String(req.FilterExpression), SortExpression: wire.String(req.SortExpression),
		NextToken: wire.String(req.NextToken),
	}
	if req.Limit != 0 {
		in.Limit = &req.Limit
	}
	if err := in.Validate(); err != nil {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	}
	out, err := g.ctl.SearchGameSessions(ctx, in)
	if err != nil {
		return nil, err
	}
	res := &playerwire.SearchResult{GameSessions: make([]playerwire.Session, 0, len(out.GameSessions)), NextToken: wire.Deref(out.NextToken)}
	for i := range out.GameSessions {
		res.GameSessions = append(res.GameSessions, sessionOf(&out.GameSessions[i]))
	}
	return res, nil
}

func sessionOf(gs *wire.GameSession) playerwire.Session {
	s := playerwire.Session{
		GameSessionId: wire.Deref(gs.GameSessionId), Name: wire.Deref(gs.Name), FleetId: wire.Deref(gs.FleetId),
		Location: wire.Deref(gs.Location), Status: wire.Deref(gs.Status),
		CurrentPlayerSessionCount: wire.Deref(gs.CurrentPlayerSessionCount), MaximumPlayerSessionCount: wire.Deref(gs.MaximumPlayerSessionCount),
		PlayerSessionCreationPolicy: wire.Deref(gs.PlayerSessionCreationPolicy),
	}
	if gs.CreationTime != nil {
		s.CreationTime = gs.CreationTime.UTC().Format(time.RFC3339Nano)
	}
	for _, p := range gs.GameProperties {
		s.GameProperties = append(s.GameProperties, playerwire.Property{Key: wire.Deref(p.Key), Value: wire.Deref(p.Value)})
	}
	return s
}
