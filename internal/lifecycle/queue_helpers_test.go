package lifecycle_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// fleetIn creates an Anywhere fleet in the given custom locations
// (creating the locations) with an optional hourly cost.
func (h *harness) fleetIn(name, cost string, locations ...string) string {
	h.t.Helper()
	ctx := context.Background()
	var cfg []types.LocationConfiguration
	for _, l := range locations {
		if _, err := h.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(l)}); err != nil && apiErrorCode(err) != "ConflictException" {
			h.t.Fatal(err)
		}
		cfg = append(cfg, types.LocationConfiguration{Location: aws.String(l)})
	}
	in := &gamelift.CreateFleetInput{Name: aws.String(name), ComputeType: types.ComputeTypeAnywhere, Locations: cfg}
	if cost != "" {
		in.AnywhereConfiguration = &types.AnywhereConfiguration{Cost: aws.String(cost)}
	}
	out, err := h.gl.CreateFleet(ctx, in)
	if err != nil {
		h.t.Fatal(err)
	}
	return aws.ToString(out.FleetAttributes.FleetId)
}

// readyProc registers a compute of fleet in location and readies a raw
// process on it (ActivateServerProcess and a first healthy heartbeat).
func (h *harness) readyProc(fleet, location, compute, ip string) *rawProc {
	h.t.Helper()
	ctx := context.Background()
	_, err := h.gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(fleet),
		ComputeName: aws.String(compute), Location: aws.String(location), IpAddress: aws.String(ip)})
	if err != nil {
		h.t.Fatal(err)
	}
	on := *h
	on.fleet = fleet
	p := on.dial(compute, "proc-"+compute, on.token(compute))
	p.ready(7000)
	return p
}

// queue creates a game session queue.
func (h *harness) queue(in *gamelift.CreateGameSessionQueueInput) *types.GameSessionQueue {
	h.t.Helper()
	out, err := h.gl.CreateGameSessionQueue(context.Background(), in)
	if err != nil {
		h.t.Fatalf("CreateGameSessionQueue: %v", err)
	}
	return out.GameSessionQueue
}

func (h *harness) startPlacement(in *gamelift.StartGameSessionPlacementInput) (*types.GameSessionPlacement, error) {
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = aws.Int32(4)
	}
	out, err := h.gl.StartGameSessionPlacement(context.Background(), in)
	if err != nil {
		return nil, err
	}
	return out.GameSessionPlacement, nil
}

func (h *harness) mustStart(in *gamelift.StartGameSessionPlacementInput) *types.GameSessionPlacement {
	h.t.Helper()
	p, err := h.startPlacement(in)
	if err != nil {
		h.t.Fatalf("StartGameSessionPlacement: %v", err)
	}
	return p
}

func (h *harness) placement(id string) *types.GameSessionPlacement {
	h.t.Helper()
	out, err := h.gl.DescribeGameSessionPlacement(context.Background(), &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.GameSessionPlacement
}

// placedOn waits for p's CreateGameSession push, activates the session
// and waits for the placement to be FULFILLED.
func (h *harness) placedOn(p *rawProc, placementID string) *types.GameSessionPlacement {
	h.t.Helper()
	m := p.push("CreateGameSession")
	p.ok("ActivateGameSession", map[string]any{"GameSessionId": m["GameSessionId"]})
	got := h.placement(placementID)
	if got.Status != types.GameSessionPlacementStateFulfilled {
		h.t.Fatalf("placement %s after activation: %s", placementID, got.Status)
	}
	return got
}

// notifications reads the outbox.
func (h *harness) notifications() []*game.Notification {
	h.t.Helper()
	var out []*game.Notification
	err := h.env.Server.Store().View(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.ListNotifications(0, 1000)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// detail decodes a notification's envelope detail.
func detail(t *testing.T, n *game.Notification) map[string]any {
	t.Helper()
	var env struct {
		DetailType string         `json:"detail-type"`
		Resources  []string       `json:"resources"`
		Detail     map[string]any `json:"detail"`
	}
	if err := json.Unmarshal(n.Envelope, &env); err != nil {
		t.Fatal(err)
	}
	if env.DetailType != "GameLift Queue Placement Event" || len(env.Resources) != 1 || env.Resources[0] != n.Resource {
		t.Errorf("envelope %s", n.Envelope)
	}
	return env.Detail
}
