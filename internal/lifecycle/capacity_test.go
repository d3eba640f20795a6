package lifecycle_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

func TestNoFreeProcessIsFleetCapacityExceeded(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		_, err := h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // nothing connected

		p := h.dial("host-1", "proc-1", tok)
		_, err = h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // connected, no ProcessReady

		p.ok("ActivateServerProcess", map[string]any{"SdkVersion": "5.4.0", "SdkLanguage": "Cpp", "Port": 7777})
		_, err = h.create(nil)
		// The SDKs drop a CreateGameSession that arrives before they know
		// they are ready; the first heartbeat says they do.
		wantAPIError(t, err, "FleetCapacityExceededException")

		p.heartbeat(false)
		_, err = h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // unhealthy

		p.heartbeat(true)
		h.mustCreate(nil)
		p.push("CreateGameSession")
		_, err = h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // busy
		p.noPush()
	})
}

func TestMaxConcurrentGameSessionActivationsPerCompute(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		_, err := h.gl.UpdateRuntimeConfiguration(t.Context(), &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String(h.fleet),
			RuntimeConfiguration: &types.RuntimeConfiguration{MaxConcurrentGameSessionActivations: aws.Int32(1),
				ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/game/server"), ConcurrentExecutions: aws.Int32(3)}}}})
		if err != nil {
			t.Fatal(err)
		}
		tokA, tokB := h.compute("host-a", "10.0.0.1"), h.compute("host-b", "10.0.0.2")
		a1, a2 := h.dial("host-a", "a1", tokA), h.dial("host-a", "a2", tokA)
		b1 := h.dial("host-b", "b1", tokB)
		for _, p := range []*rawProc{a1, a2, b1} {
			p.ready(7000)
		}
		// Oldest process first (same creation time here: by pID), but
		// never two ACTIVATING on one compute.
		first := h.session(aws.ToString(h.mustCreate(nil).GameSessionId))
		second := h.session(aws.ToString(h.mustCreate(nil).GameSessionId))
		if aws.ToString(first.ComputeName) != "host-a" || aws.ToString(second.ComputeName) != "host-b" {
			t.Fatalf("sessions on %s and %s, want host-a then host-b", aws.ToString(first.ComputeName), aws.ToString(second.ComputeName))
		}
		_, err = h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // a2 is free, but host-a is activating one already
		b1.push("CreateGameSession")
		a2.noPush()

		// Once host-a's session is ACTIVE, host-a may activate another.
		m := a1.push("CreateGameSession")
		a1.ok("ActivateGameSession", map[string]any{"GameSessionId": m["GameSessionId"]})
		third := h.session(aws.ToString(h.mustCreate(nil).GameSessionId))
		if aws.ToString(third.ComputeName) != "host-a" {
			t.Errorf("third session on %s, want host-a", aws.ToString(third.ComputeName))
		}
		a2.push("CreateGameSession")
	})
}
