package gateway

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

// QueueControl is the part of the queues' service queue placement uses;
// *queueing.Service implements it.
type QueueControl interface {
	StartGameSessionPlacement(context.Context, *wire.StartGameSessionPlacementInput) (*wire.StartGameSessionPlacementOutput, error)
	DescribeGameSessionPlacement(context.Context, *wire.DescribeGameSessionPlacementInput) (*wire.DescribeGameSessionPlacementOutput, error)
	StopGameSessionPlacement(context.Context, *wire.StopGameSessionPlacementInput) (*wire.StopGameSessionPlacementOutput, error)
	DescribeGameSessionQueues(context.Context, *wire.DescribeGameSessionQueuesInput) (*wire.DescribeGameSessionQueuesOutput, error)
}

// AliasResolver resolves a queue destination's alias; *control.Service
// implements it.
type AliasResolver interface {
	ResolveAlias(context.Context, *wire.ResolveAliasInput) (*wire.ResolveAliasOutput, error)
}

// QueuePlacer places players' sessions through GameLift-style queues.
type QueuePlacer struct {
	ctl     QueueControl
	aliases AliasResolver
}

// NewQueuePlacer returns a Placer over the queues of ctl, resolving
// aliases with aliases.
func NewQueuePlacer(ctl QueueControl, aliases AliasResolver) *QueuePlacer {
	return &QueuePlacer{ctl: ctl, aliases: aliases}
}

// Place starts a placement with the player as its one desired player
// session and waits for it. When ctx ends first the placement is
// stopped, so no session appears later with a seat nobody knows of; if it
// was fulfilled meanwhile, the seat is answered after all.
func (q *QueuePlacer) Place(ctx context.Context, queue, player string, req *playerwire.CreateSessionRequest) (*playerwire.Seat, error) {
	in := placementInput(queue, player, req)
	if err := in.Validate(); err != nil {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	}
	if _, err := q.ctl.StartGameSessionPlacement(ctx, in); err != nil {
		return nil, err
	}
	p, err := q.wait(ctx, *in.PlacementId)
	if err != nil {
		return nil, err
	}
	return placedSeat(p, player)
}

// placementInput is the StartGameSessionPlacement request of a create on
// a queue; the IdempotencyToken, when given, is the PlacementId.
func placementInput(queue, player string, req *playerwire.CreateSessionRequest) *wire.StartGameSessionPlacementInput {
	id := req.IdempotencyToken
	if id == "" {
		id = "player-" + uuid.NewString()
	}
	in := &wire.StartGameSessionPlacementInput{
		PlacementId: wire.String(id), GameSessionQueueName: wire.String(queue),
		MaximumPlayerSessionCount: &req.MaximumPlayerSessionCount, GameSessionName: wire.String(req.Name),
		GameSessionData:       wire.String(req.GameSessionData),
		DesiredPlayerSessions: []wire.DesiredPlayerSession{{PlayerId: wire.String(player), PlayerData: wire.String(req.PlayerData)}},
	}
	for _, p := range req.GameProperties {
		in.GameProperties = append(in.GameProperties, wire.GameProperty{Key: &p.Key, Value: &p.Value})
	}
	return in
}

// wait polls the placement until it leaves PENDING or ctx ends; then it
// stops it and reads it once more.
func (q *QueuePlacer) wait(ctx context.Context, id string) (*wire.GameSessionPlacement, error) {
	bg := context.WithoutCancel(ctx)
	wait := firstPoll
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if _, err := q.ctl.StopGameSessionPlacement(bg, &wire.StopGameSessionPlacementInput{PlacementId: wire.String(id)}); err != nil &&
				!game.IsKind(err, game.InvalidRequest) {
				return nil, err
			}
			return q.describe(bg, id)
		case <-timer.C:
		}
		p, err := q.describe(bg, id)
		if err != nil || wire.Deref(p.Status) != game.PlacementPending {
			return p, err
		}
		timer.Reset(wait)
		wait = min(2*wait, maxPoll)
	}
}

func (q *QueuePlacer) describe(ctx context.Context, id string) (*wire.GameSessionPlacement, error) {
	out, err := q.ctl.DescribeGameSessionPlacement(ctx, &wire.DescribeGameSessionPlacementInput{PlacementId: wire.String(id)})
	if err != nil {
		return nil, err
	}
	return out.GameSessionPlacement, nil
}

// placedSeat is the player's seat in a FULFILLED placement; any other
// outcome is PlacementFailed naming the status.
func placedSeat(p *wire.GameSessionPlacement, player string) (*playerwire.Seat, error) {
	if st := wire.Deref(p.Status); st != game.PlacementFulfilled {
		msg := "The queue could not place a game session (" + st + "); try again"
		if st == game.PlacementPending || st == game.PlacementCancelled {
			msg = "The queue did not place a game session in time; try again"
		}
		return nil, fail(http.StatusServiceUnavailable, CodePlacementFailed, msg)
	}
	seat := &playerwire.Seat{GameSessionId: wire.Deref(p.GameSessionArn), IpAddress: wire.Deref(p.IpAddress),
		DnsName: wire.Deref(p.DnsName), Port: wire.Deref(p.Port)}
	if seat.GameSessionId == "" {
		seat.GameSessionId = wire.Deref(p.GameSessionId)
	}
	for _, ps := range p.PlacedPlayerSessions {
		if wire.Deref(ps.PlayerId) == player {
			seat.PlayerSessionId = wire.Deref(ps.PlayerSessionId)
			return seat, nil
		}
	}
	return nil, &Error{Status: http.StatusConflict, Code: CodeSeatNotReserved, Cause: CodePlacementFailed, GameSessionID: seat.GameSessionId,
		Message: "The game session was placed but holds no seat for you"}
}

// Routes reports whether queue has fleetID, or an alias to it, among its
// destinations.
func (q *QueuePlacer) Routes(ctx context.Context, queue, fleetID string) (bool, error) {
	out, err := q.ctl.DescribeGameSessionQueues(ctx, &wire.DescribeGameSessionQueuesInput{Names: []string{queue}})
	if game.IsKind(err, game.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, gq := range out.GameSessionQueues {
		for _, d := range gq.Destinations {
			if ok, err := q.destinationIs(ctx, wire.Deref(d.DestinationArn), fleetID); ok || err != nil {
				return ok, err
			}
		}
	}
	return false, nil
}

func (q *QueuePlacer) destinationIs(ctx context.Context, arn, fleetID string) (bool, error) {
	_, id, _ := strings.Cut(arn, ":fleet/")
	if id == fleetID {
		return true, nil
	}
	if !strings.Contains(arn, ":alias/") {
		return false, nil
	}
	out, err := q.aliases.ResolveAlias(ctx, &wire.ResolveAliasInput{AliasId: wire.String(arn)})
	if err != nil {
		return false, nil // a terminal or deleted alias routes nowhere
	}
	return wire.Deref(out.FleetId) == fleetID, nil
}
