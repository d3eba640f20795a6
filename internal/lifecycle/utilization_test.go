package lifecycle_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
)

func TestFleetUtilizationCountsActiveProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		a, b := h.dial("host-1", "proc-a", tok), h.dial("host-1", "proc-b", tok)
		h.dial("host-1", "proc-c", tok) // connected, never ready: not counted
		a.ready(7001)
		b.ready(7002)
		gs := h.mustCreate(nil)
		a.push("CreateGameSession")
		a.ok("ActivateGameSession", map[string]any{"GameSessionId": aws.ToString(gs.GameSessionId)})
		out, err := h.gl.DescribeFleetUtilization(t.Context(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{h.fleet}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.FleetUtilization) != 1 {
			t.Fatalf("FleetUtilization = %+v", out.FleetUtilization)
		}
		u := out.FleetUtilization[0]
		if aws.ToInt32(u.ActiveServerProcessCount) != 2 || aws.ToInt32(u.ActiveGameSessionCount) != 1 ||
			aws.ToInt32(u.MaximumPlayerSessionCount) != 4 {
			t.Errorf("utilization: processes %d, sessions %d, max players %d; want 2, 1, 4", aws.ToInt32(u.ActiveServerProcessCount),
				aws.ToInt32(u.ActiveGameSessionCount), aws.ToInt32(u.MaximumPlayerSessionCount))
		}
		b.ok("TerminateServerProcess", nil)
		out, err = h.gl.DescribeFleetUtilization(t.Context(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{h.fleet}})
		if err != nil {
			t.Fatal(err)
		}
		if n := aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount); n != 1 {
			t.Errorf("after ProcessEnding: %d active processes, want 1", n)
		}
	})
}
