package client

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"
)

// controlPlane calls the GameLift control-plane API with AWS credentials.
type controlPlane struct {
	gl     *gamelift.Client
	player string
	wait   time.Duration
}

func newControlPlane(cfg Config) *controlPlane {
	opts := gamelift.Options{Region: cfg.Region, Credentials: cfg.Credentials, HTTPClient: cfg.HTTPClient}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	return &controlPlane{gl: gamelift.New(opts), player: cfg.PlayerID, wait: cfg.CreateTimeout}
}

func (c *controlPlane) playerOr(id string) string {
	if id != "" {
		return id
	}
	return c.player
}

// create makes the session, waits until it is ACTIVE, and reserves the
// player's seat when there is a player. A seat that cannot be had is
// SeatNotReserved naming the session.
func (c *controlPlane) create(ctx context.Context, r CreateSessionRequest) (Seat, error) {
	loc := r.Location
	if loc == "" {
		var err error
		if loc, err = c.firstLocation(ctx, r.FleetID, r.AliasID); err != nil {
			return Seat{}, err
		}
	}
	in := &gamelift.CreateGameSessionInput{MaximumPlayerSessionCount: aws.Int32(int32(r.MaxPlayers)), Location: aws.String(loc),
		Name: optional(r.Name), GameSessionData: optional(r.SessionData), IdempotencyToken: optional(r.IdempotencyToken),
		FleetId: optional(r.FleetID), AliasId: optional(r.AliasID), GameProperties: gameProperties(r.Properties)}
	if p := c.playerOr(r.PlayerID); p != "" {
		in.CreatorId = aws.String(p)
	}
	out, err := c.gl.CreateGameSession(ctx, in)
	if err != nil {
		return Seat{}, apiError(err)
	}
	gs, err := c.waitActive(ctx, aws.ToString(out.GameSession.GameSessionId))
	if err != nil {
		return Seat{}, err
	}
	seat := Seat{GameSessionID: aws.ToString(gs.GameSessionId), IPAddress: aws.ToString(gs.IpAddress),
		DNSName: aws.ToString(gs.DnsName), Port: int(aws.ToInt32(gs.Port)), Location: aws.ToString(gs.Location)}
	if c.playerOr(r.PlayerID) == "" {
		return seat, nil
	}
	placed, err := c.reserve(ctx, JoinSessionRequest{GameSessionID: seat.GameSessionID, PlayerID: r.PlayerID, PlayerData: r.PlayerData})
	if err != nil {
		e := apiError(err).(*Error)
		return Seat{}, &Error{Code: CodeSeatNotReserved, Cause: e.Code, GameSessionID: seat.GameSessionID,
			Message: "the game session was created but no seat could be reserved in it: " + e.Message}
	}
	placed.Location = seat.Location
	return placed, nil
}

func (c *controlPlane) firstLocation(ctx context.Context, fleetID, aliasID string) (string, error) {
	if aliasID != "" {
		out, err := c.gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: aws.String(aliasID)})
		if err != nil {
			return "", apiError(err)
		}
		fleetID = aws.ToString(out.FleetId)
	}
	out, err := c.gl.DescribeFleetLocationAttributes(ctx, &gamelift.DescribeFleetLocationAttributesInput{FleetId: aws.String(fleetID)})
	if err != nil {
		return "", apiError(err)
	}
	for _, la := range out.LocationAttributes {
		if la.LocationState != nil && aws.ToString(la.LocationState.Location) != "" {
			return aws.ToString(la.LocationState.Location), nil
		}
	}
	return "", errorf(CodeInvalidParameter, "fleet %s has no location", fleetID)
}

// poll calls step with a growing interval until it reports done, the
// wait bound passes (ActivationTimeout naming id) or ctx ends.
func (c *controlPlane) poll(ctx context.Context, id string, step func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	wait := 2 * time.Millisecond
	for {
		done, err := step(ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return &Error{Code: CodeActivationTimeout, Message: "the wait for the game session ended", GameSessionID: id, Err: ctx.Err()}
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func (c *controlPlane) waitActive(ctx context.Context, id string) (*types.GameSession, error) {
	var gs types.GameSession
	err := c.poll(ctx, id, func(ctx context.Context) (bool, error) {
		out, err := c.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
		if err != nil {
			return false, apiError(err)
		}
		if len(out.GameSessions) != 1 {
			return false, errorf(CodeNotFound, "game session %s not found", id)
		}
		gs = out.GameSessions[0]
		switch gs.Status {
		case types.GameSessionStatusActive:
			return true, nil
		case types.GameSessionStatusActivating:
			return false, nil
		}
		return false, &Error{Code: "GameSessionFailed", GameSessionID: id, Message: "the game session ended before it became ACTIVE (" + string(gs.Status) + ")"}
	})
	return &gs, err
}

// createOnQueue starts a placement with the player as its desired player
// session and waits for it; a placement still pending when the wait ends
// is stopped.
func (c *controlPlane) createOnQueue(ctx context.Context, r CreateSessionOnQueueRequest) (Seat, error) {
	id := r.PlacementID
	if id == "" {
		id = "client-" + uuid.NewString()
	}
	in := &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(id), GameSessionQueueName: aws.String(r.QueueName),
		MaximumPlayerSessionCount: aws.Int32(int32(r.MaxPlayers)), GameSessionName: optional(r.Name),
		GameSessionData: optional(r.SessionData), GameProperties: gameProperties(r.Properties)}
	player := c.playerOr(r.PlayerID)
	if player != "" {
		in.DesiredPlayerSessions = []types.DesiredPlayerSession{{PlayerId: aws.String(player), PlayerData: optional(r.PlayerData)}}
	}
	if _, err := c.gl.StartGameSessionPlacement(ctx, in); err != nil {
		return Seat{}, apiError(err)
	}
	var p *types.GameSessionPlacement
	err := c.poll(ctx, "", func(ctx context.Context) (bool, error) {
		out, err := c.gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
		if err != nil {
			return false, apiError(err)
		}
		p = out.GameSessionPlacement
		return p.Status != types.GameSessionPlacementStatePending, nil
	})
	if err != nil {
		c.gl.StopGameSessionPlacement(context.WithoutCancel(ctx), &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String(id)})
		return Seat{}, &Error{Code: CodePlacementFailed, Message: "the placement was not fulfilled in time", Err: err}
	}
	return placedSeat(p, player)
}

func placedSeat(p *types.GameSessionPlacement, player string) (Seat, error) {
	if p.Status != types.GameSessionPlacementStateFulfilled {
		return Seat{}, errorf(CodePlacementFailed, "the queue could not place a game session (%s)", p.Status)
	}
	seat := Seat{GameSessionID: aws.ToString(p.GameSessionArn), PlayerID: player, IPAddress: aws.ToString(p.IpAddress),
		DNSName: aws.ToString(p.DnsName), Port: int(aws.ToInt32(p.Port))}
	for _, ps := range p.PlacedPlayerSessions {
		if aws.ToString(ps.PlayerId) == player {
			seat.PlayerSessionID = aws.ToString(ps.PlayerSessionId)
		}
	}
	return seat, nil
}

func (c *controlPlane) search(ctx context.Context, r SearchSessionsRequest) (SearchSessionsResult, error) {
	in := &gamelift.SearchGameSessionsInput{FleetId: optional(r.FleetID), AliasId: optional(r.AliasID), Location: optional(r.Location),
		FilterExpression: optional(r.Filter), SortExpression: optional(r.Sort), NextToken: optional(r.NextToken)}
	if r.Limit > 0 {
		in.Limit = aws.Int32(int32(r.Limit))
	}
	out, err := c.gl.SearchGameSessions(ctx, in)
	if err != nil {
		return SearchSessionsResult{}, apiError(err)
	}
	res := SearchSessionsResult{NextToken: aws.ToString(out.NextToken)}
	for _, gs := range out.GameSessions {
		info := SessionInfo{GameSessionID: aws.ToString(gs.GameSessionId), Name: aws.ToString(gs.Name), FleetID: aws.ToString(gs.FleetId),
			Location: aws.ToString(gs.Location), Status: string(gs.Status), CurrentPlayers: int(aws.ToInt32(gs.CurrentPlayerSessionCount)),
			MaxPlayers: int(aws.ToInt32(gs.MaximumPlayerSessionCount)), CreationPolicy: string(gs.PlayerSessionCreationPolicy),
			CreationTime: aws.ToTime(gs.CreationTime), Properties: map[string]string{}}
		for _, p := range gs.GameProperties {
			info.Properties[aws.ToString(p.Key)] = aws.ToString(p.Value)
		}
		res.Sessions = append(res.Sessions, info)
	}
	return res, nil
}

func (c *controlPlane) reserve(ctx context.Context, r JoinSessionRequest) (Seat, error) {
	player := c.playerOr(r.PlayerID)
	if player == "" {
		return Seat{}, errorf(CodeInvalidParameter, "a PlayerID is required over the control plane")
	}
	out, err := c.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(r.GameSessionID),
		PlayerId: aws.String(player), PlayerData: optional(r.PlayerData)})
	if err != nil {
		return Seat{}, apiError(err)
	}
	ps := out.PlayerSession
	return Seat{GameSessionID: aws.ToString(ps.GameSessionId), PlayerSessionID: aws.ToString(ps.PlayerSessionId), PlayerID: player,
		IPAddress: aws.ToString(ps.IpAddress), DNSName: aws.ToString(ps.DnsName), Port: int(aws.ToInt32(ps.Port))}, nil
}

func (c *controlPlane) rejoin(context.Context, string) (Seat, error) {
	return Seat{}, errorf(CodeUnsupported, "rejoin is a player gateway feature; join again over the control plane")
}

// release does nothing: the control plane cannot end a player session;
// the game server does when the player disconnects.
func (c *controlPlane) release(context.Context, Seat) error { return nil }

// apiError turns an AWS SDK error into an *Error: the exception's name
// without "Exception" as the code (InternalService as InternalError).
func apiError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code := strings.TrimSuffix(ae.ErrorCode(), "Exception")
		if code == "InternalService" {
			code = CodeInternal
		}
		return &Error{Code: code, Message: ae.ErrorMessage(), Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeNetwork, Message: "the call was cancelled or timed out", Err: err}
	}
	return &Error{Code: CodeNetwork, Message: "the control-plane API could not be reached", Err: err}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func gameProperties(m map[string]string) []types.GameProperty {
	var out []types.GameProperty
	for k, v := range m {
		out = append(out, types.GameProperty{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}
