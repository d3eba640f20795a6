package gateway

import (
	"context"

	"github.com/anylift/anylift/sdk/playerwire"
)

// Placer places game sessions through queues, for creates on a queue.
type Placer interface {
	// Place starts a game session placement on queue with the caller as
	// its one desired player, waits (as long as ctx allows) until it is
	// FULFILLED, and answers the caller's seat. A placement that ends
	// otherwise (TIMED_OUT, FAILED, CANCELLED) is a *Error with code
	// PlacementFailed.
	Place(ctx context.Context, queue, player string, req *playerwire.CreateSessionRequest) (*playerwire.Seat, error)
	// Routes reports whether a game session on fleetID can have come
	// from queue (the fleet, or an alias to it, is a destination).
	Routes(ctx context.Context, queue, fleetID string) (bool, error)
}

// queueRoutesTo reports whether an allowed queue places sessions on fleetID.
func (g *Gateway) queueRoutesTo(ctx context.Context, fleetID string) (bool, error) {
	if g.placer == nil {
		return false, nil
	}
	for _, q := range g.cfg.AllowedQueues {
		if q == "*" {
			return true, nil
		}
		ok, err := g.placer.Routes(ctx, q, fleetID)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}
