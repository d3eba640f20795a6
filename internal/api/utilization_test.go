package api_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

// Anywhere fleets get real utilization and capacity numbers: computes are
// instances, idle ones host no live game session.
func TestFleetUtilizationAndCapacity(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			gl := env.Client()
			ctx := context.Background()
			seedFleetAndLocation(t, env)
			for _, c := range []string{"compute-1", "compute-2", "compute-3"} {
				if _, err := register(gl, seedFleetID, c, seedLoc, "10.0.0.1"); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			active := seedSession(t, env, "gs-a", "ACTIVE", 10, now)
			seedSession(t, env, "gs-b", "ACTIVATING", 6, now.Add(time.Millisecond))
			seedSession(t, env, "gs-c", "TERMINATED", 8, now.Add(2*time.Millisecond))
			if _, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{
				GameSessionId: aws.String(active), PlayerIds: []string{"p1", "p2", "p3"},
			}); err != nil {
				t.Fatal(err)
			}

			u, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{seedFleetID, "fleet-missing"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(u.FleetUtilization) != 1 {
				t.Fatalf("FleetUtilization = %+v, want the one existing fleet", u.FleetUtilization)
			}
			fu := u.FleetUtilization[0]
			if aws.ToInt32(fu.ActiveGameSessionCount) != 1 || aws.ToInt32(fu.CurrentPlayerSessionCount) != 3 ||
				aws.ToInt32(fu.MaximumPlayerSessionCount) != 10 || fu.ActiveServerProcessCount == nil {
				t.Errorf("utilization = active %d, players %d, max %d, processes %v",
					aws.ToInt32(fu.ActiveGameSessionCount), aws.ToInt32(fu.CurrentPlayerSessionCount),
					aws.ToInt32(fu.MaximumPlayerSessionCount), fu.ActiveServerProcessCount)
			}

			c, err := gl.DescribeFleetCapacity(ctx, &gamelift.DescribeFleetCapacityInput{FleetIds: []string{seedFleetID}})
			if err != nil {
				t.Fatal(err)
			}
			counts := c.FleetCapacity[0].InstanceCounts
			// All seeded sessions run on compute-1: two computes are idle.
			if aws.ToInt32(counts.ACTIVE) != 3 || aws.ToInt32(counts.IDLE) != 2 || aws.ToInt32(counts.DESIRED) != 3 {
				t.Errorf("capacity = active %d idle %d desired %d", aws.ToInt32(counts.ACTIVE), aws.ToInt32(counts.IDLE), aws.ToInt32(counts.DESIRED))
			}

			lu, err := gl.DescribeFleetLocationUtilization(ctx, &gamelift.DescribeFleetLocationUtilizationInput{
				FleetId: aws.String(seedFleetID), Location: aws.String(seedLoc)})
			if err != nil || aws.ToString(lu.FleetUtilization.Location) != seedLoc || aws.ToInt32(lu.FleetUtilization.CurrentPlayerSessionCount) != 3 {
				t.Fatalf("location utilization = %+v, %v", lu, err)
			}
			lc, err := gl.DescribeFleetLocationCapacity(ctx, &gamelift.DescribeFleetLocationCapacityInput{
				FleetId: aws.String(seedFleetID), Location: aws.String(seedLoc)})
			if err != nil || aws.ToInt32(lc.FleetCapacity.InstanceCounts.ACTIVE) != 3 {
				t.Fatalf("location capacity = %+v, %v", lc, err)
			}
			_, err = gl.DescribeFleetLocationCapacity(ctx, &gamelift.DescribeFleetLocationCapacityInput{
				FleetId: aws.String(seedFleetID), Location: aws.String("custom-elsewhere")})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Errorf("unknown location: %v, want InvalidRequestException", err)
			}

			// Without FleetIds: every fleet, paginated; the answer is a list even when empty.
			r := env.CallJSON(t, "DescribeFleetUtilization", `{}`)
			if list, ok := r.JSON(t)["FleetUtilization"].([]any); !ok || len(list) != 1 {
				t.Errorf("DescribeFleetUtilization {} = %s", r.Body)
			}
			r = env.CallJSON(t, "DescribeFleetCapacity", `{"FleetIds": ["fleet-none"]}`)
			if list, ok := r.JSON(t)["FleetCapacity"].([]any); !ok || len(list) != 0 {
				t.Errorf("DescribeFleetCapacity of a missing fleet = %s, want an empty list", r.Body)
			}
		})
	}
}
