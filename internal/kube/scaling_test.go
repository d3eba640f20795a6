package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kubetest"
)

// buffer20 puts a target-based policy keeping 20 % of the fleet's game
// session capacity available.
func buffer20(tb testing.TB, gl *gamelift.Client, fleet string) {
	tb.Helper()
	if _, err := gl.PutScalingPolicy(context.Background(), &gamelift.PutScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String("buffer"),
		PolicyType: types.PolicyTypeTargetBased, MetricName: types.MetricNamePercentAvailableGameSessions,
		TargetConfiguration: &types.TargetConfiguration{TargetValue: aws.Float64(20)}}); err != nil {
		tb.Fatal(err)
	}
}

// createSession creates a game session on the fleet, trying again while
// no server is free (FleetCapacityExceededException).
func createSession(tb testing.TB, gl *gamelift.Client, fleet string) *types.GameSession {
	tb.Helper()
	var gs *types.GameSession
	exectest.Eventually(tb, "a free game server", 60*time.Second, func() (bool, string) {
		out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
		if err != nil {
			return false, err.Error()
		}
		gs = out.GameSession
		return true, ""
	})
	return gs
}

// TestBufferScalesUp: a container fleet on a real API server, with a
// 20 % buffer policy, grows as game sessions fill it: after each session
// the desired capacity keeps a fifth of the game servers (at least two)
// free, the controller starts the pods, and the servers in them become
// available, with no call to UpdateFleetCapacity.
func TestBufferScalesUp(t *testing.T) {
	cluster := kubetest.Start(t)
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, cluster, opts...)
			ctx := context.Background()
			fleet := w.chatFleet(freePort(t))
			w.capacity(fleet, 1, 10)
			buffer20(t, w.gl, fleet)
			w.groups(fleet, 0, 2)

			// Sessions in use → game servers wanted: ceil(n / 0.8), and
			// two more than n.
			for n, want := range []int{3, 4, 5, 6, 7} {
				createSession(t, w.gl, fleet)
				w.groups(fleet, n+1, want-n-1)
				c, err := w.gl.DescribeFleetCapacity(ctx, &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
				if err != nil {
					t.Fatal(err)
				}
				if d := aws.ToInt32(c.FleetCapacity[0].InstanceCounts.DESIRED); d != int32(want) {
					t.Fatalf("%d sessions: desired %d, want %d", n+1, d, want)
				}
			}
			out, err := w.gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
			if err != nil {
				t.Fatal(err)
			}
			var scaled []string
			for _, e := range out.Events {
				if e.EventCode == types.EventCodeFleetScalingEvent && strings.HasPrefix(aws.ToString(e.Message), "Scaling policy buffer") {
					scaled = append(scaled, aws.ToString(e.Message))
				}
			}
			if len(scaled) != 6 || !strings.Contains(scaled[5], "from 6 to 7") {
				t.Errorf("scaling events:\n%s", strings.Join(scaled, "\n"))
			}
		})
	}
}
