package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

func (g *Gateway) serveCreate(ctx context.Context, player string, r *http.Request) (any, error) {
	req, err := decodeCreate(r.Body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.CreateTimeout)
	defer cancel()
	if req.QueueName != "" {
		return g.createOnQueue(ctx, player, req)
	}
	return g.create(ctx, player, req)
}

// create makes a game session on a fleet or alias with the player as its
// creator, waits until it is ACTIVE and reserves the player's seat. When
// the session exists but the seat could not be had, the answer says so
// and names the session (SeatNotReserved, ActivationTimeout,
// GameSessionFailed); nothing is left without the caller knowing.
func (g *Gateway) create(ctx context.Context, player string, req *playerwire.CreateSessionRequest) (*playerwire.Seat, error) {
	if err := g.checkTarget(req.FleetId, req.AliasId); err != nil {
		return nil, err
	}
	if err := g.relaying.Route(ctx, req.FleetId); err != nil {
		return nil, err
	}
	if req.AliasId != "" {
		if err := g.routeAlias(ctx, req.AliasId); err != nil {
			return nil, err
		}
	}
	in := createInput(player, req)
	if err := in.Validate(); err != nil {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	}
	if in.Location == nil {
		loc, err := g.defaultLocation(ctx, req.FleetId, req.AliasId)
		if err != nil {
			return nil, err
		}
		in.Location = wire.String(loc)
	}
	out, err := g.ctl.CreateGameSession(ctx, in)
	if err != nil {
		return nil, err
	}
	id := wire.Deref(out.GameSession.GameSessionId)
	gs, err := g.waitActive(ctx, id)
	if err != nil {
		e := *g.asError(err) // whatever went wrong, the caller learns the session exists
		e.GameSessionID = id
		return nil, &e
	}
	seat, err := g.reserve(ctx, gs, player, req.PlayerData)
	if err != nil {
		return nil, seatNotReserved(g.asError(err), wire.Deref(gs.GameSessionId))
	}
	return seat, nil
}

// createInput is the CreateGameSession request a player's create makes.
func createInput(player string, req *playerwire.CreateSessionRequest) *wire.CreateGameSessionInput {
	in := &wire.CreateGameSessionInput{
		FleetId: wire.String(req.FleetId), AliasId: wire.String(req.AliasId),
		MaximumPlayerSessionCount: &req.MaximumPlayerSessionCount, Name: wire.String(req.Name),
		CreatorId: wire.String(player), IdempotencyToken: wire.String(req.IdempotencyToken),
		GameSessionData: wire.String(req.GameSessionData), Location: wire.String(req.Location),
	}
	for _, p := range req.GameProperties {
		in.GameProperties = append(in.GameProperties, wire.GameProperty{Key: &p.Key, Value: &p.Value})
	}
	return in
}

// seatNotReserved reports a session that exists without the caller's seat.
func seatNotReserved(cause *Error, gameSessionID string) *Error {
	return &Error{Status: cause.Status, Code: CodeSeatNotReserved, Cause: cause.Code, GameSessionID: gameSessionID,
		Message: "The game session was created but no seat could be reserved in it: " + cause.Message}
}

// defaultLocation is the first location of the fleet (or the alias's).
func (g *Gateway) defaultLocation(ctx context.Context, fleetID, aliasID string) (string, error) {
	if aliasID != "" {
		out, err := g.ctl.ResolveAlias(ctx, &wire.ResolveAliasInput{AliasId: wire.String(aliasID)})
		if err != nil {
			return "", err
		}
		fleetID = wire.Deref(out.FleetId)
	}
	out, err := g.ctl.DescribeFleetLocationAttributes(ctx, &wire.DescribeFleetLocationAttributesInput{FleetId: wire.String(fleetID)})
	if err != nil {
		return "", err
	}
	for _, la := range out.LocationAttributes {
		if la.LocationState != nil && wire.Deref(la.LocationState.Location) != "" {
			return wire.Deref(la.LocationState.Location), nil
		}
	}
	return "", fail(http.StatusConflict, CodeInvalidFleetStatus, "The fleet has no location to host a game session")
}

// Polling bounds for a session's activation.
const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// waitActive waits until the game session is ACTIVE, polling with a
// growing interval until ctx ends. A session that ends instead is
// GameSessionFailed; one still activating at the deadline is
// ActivationTimeout. Both name the session.
func (g *Gateway) waitActive(ctx context.Context, id string) (*wire.GameSession, error) {
	wait := firstPoll
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			e := fail(http.StatusGatewayTimeout, CodeActivationTimeout, "The game session did not become ACTIVE in time; join it later or create another")
			e.GameSessionID = id
			return nil, e
		case <-timer.C:
		}
		gs, err := g.session(context.WithoutCancel(ctx), id)
		if err != nil {
			return nil, err
		}
		switch wire.Deref(gs.Status) {
		case game.SessionActive:
			return gs, nil
		case game.SessionActivating:
		default:
			e := fail(http.StatusServiceUnavailable, CodeGameSessionFailed, "The game session ended before it became ACTIVE ("+wire.Deref(gs.Status)+"); create another")
			e.GameSessionID = id
			return nil, e
		}
		timer.Reset(wait)
		wait = min(2*wait, maxPoll)
	}
}

// session describes one game session; NotFound when unknown.
func (g *Gateway) session(ctx context.Context, id string) (*wire.GameSession, error) {
	in := &wire.DescribeGameSessionsInput{GameSessionId: wire.String(id)}
	if err := in.Validate(); err != nil {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	}
	out, err := g.ctl.DescribeGameSessions(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(out.GameSessions) == 0 {
		return nil, fail(http.StatusNotFound, CodeNotFound, "Game session "+clip(id)+" not found")
	}
	return &out.GameSessions[0], nil
}

// createOnQueue places a session through an allowed queue.
func (g *Gateway) createOnQueue(ctx context.Context, player string, req *playerwire.CreateSessionRequest) (*playerwire.Seat, error) {
	if !allowed(g.cfg.AllowedQueues, req.QueueName) {
		return nil, errForbidden("queue", req.QueueName)
	}
	if g.placer == nil {
		return nil, fail(http.StatusNotImplemented, CodeUnsupported, "This service does not place game sessions through queues")
	}
	seat, err := g.placer.Place(ctx, req.QueueName, player, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fail(http.StatusGatewayTimeout, CodePlacementFailed, "The placement was not fulfilled in time")
	}
	return seat, err
}
