package fleettest

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	sdk "github.com/anylift/anylift/sdk/server"
)

// Queue creates a game session queue over the fleet, with a notification
// target when target is not empty.
func (e *Env) Queue(name, target string) *types.GameSessionQueue {
	e.t.Helper()
	in := &gamelift.CreateGameSessionQueueInput{Name: aws.String(name),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(e.Fleet)}}}
	if target != "" {
		in.NotificationTarget = aws.String(target)
	}
	out, err := e.GL.CreateGameSessionQueue(context.Background(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return out.GameSessionQueue
}

// Start starts a placement on queue (4 seats unless set) and returns it
// as StartGameSessionPlacement answered.
func (e *Env) Start(queue, id string, in *gamelift.StartGameSessionPlacementInput) *types.GameSessionPlacement {
	e.t.Helper()
	if in == nil {
		in = &gamelift.StartGameSessionPlacementInput{}
	}
	in.GameSessionQueueName, in.PlacementId = aws.String(queue), aws.String(id)
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = aws.Int32(4)
	}
	out, err := e.GL.StartGameSessionPlacement(context.Background(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return out.GameSessionPlacement
}

// Fulfil activates the session placement id put on p and waits for the
// placement to be FULFILLED.
func (e *Env) Fulfil(p *sdk.Process, id string) *types.GameSessionPlacement {
	e.t.Helper()
	WaitFor(e.t, "the placed session to reach the process", func() bool { return p.ActivateGameSession() == nil })
	var pl *types.GameSessionPlacement
	WaitFor(e.t, "the placement to be fulfilled", func() bool {
		out, err := e.GL.DescribeGameSessionPlacement(context.Background(),
			&gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
		if err != nil {
			e.t.Fatal(err)
		}
		pl = out.GameSessionPlacement
		return pl.Status == types.GameSessionPlacementStateFulfilled
	})
	return pl
}
