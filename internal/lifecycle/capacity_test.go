package lifecycle_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/exectest"
)

func TestNoFreeProcessIsFleetCapacityExceeded(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		_, err := h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // nothing connected

		p := h.dial("host-1", "proc-1", tok)
		_, err = h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // connected, no ProcessReady

		p.ready(7777)
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

// TestPlacedBeforeTheFirstHeartbeat: a process takes a game session as
// soon as it called ProcessReady, as GameLift documents, through
// CreateGameSession and through a queue. The SDKs drop a CreateGameSession
// that comes before they know they are ready, and send their first
// heartbeat once they know (the C# SDK on Mono about 2.4 s later), so the
// session's start is pushed with that heartbeat, once, whatever health it
// reports.
func TestPlacedBeforeTheFirstHeartbeat(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		activate := func(p *rawProc) {
			p.ok("ActivateServerProcess", map[string]any{"SdkVersion": "5.0.0", "SdkLanguage": "CSharp", "Port": 7777})
		}
		p := h.dial("host-1", "proc-1", tok)
		activate(p)
		gs := h.mustCreate(nil)
		// CreateGameSession's answer names no compute, as GameLift's; the
		// port says which process took it.
		if gs.Status != types.GameSessionStatusActivating || aws.ToInt32(gs.Port) != 7777 {
			t.Fatalf("session placed in the gap: %s port %d", gs.Status, aws.ToInt32(gs.Port))
		}
		p.noPush() // the SDK may not know yet that it is ready
		_, err := h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException") // one session per process

		p.heartbeat(true)
		m := p.push("CreateGameSession")
		if m["GameSessionId"] != aws.ToString(gs.GameSessionId) {
			t.Fatalf("pushed %v, want %s", m["GameSessionId"], aws.ToString(gs.GameSessionId))
		}
		p.heartbeat(true)
		p.noPush() // once
		p.ok("ActivateGameSession", map[string]any{"GameSessionId": m["GameSessionId"]})
		if got := h.session(aws.ToString(gs.GameSessionId)); got.Status != types.GameSessionStatusActive {
			t.Fatalf("session %s after activation", got.Status)
		}

		// Through a queue; the first heartbeat reports the process unhealthy,
		// but the SDK is ready all the same.
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("main"), Destinations: dest(h.fleet)})
		q := h.dial("host-1", "proc-2", tok)
		activate(q)
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("pl-1"), GameSessionQueueName: aws.String("main")})
		exectest.Eventually(t, "the placement on proc-2", 10*time.Second, func() (bool, string) {
			got := h.process("host-1", "proc-2").GameSessionID
			return got != "", "none yet"
		})
		q.noPush()
		q.heartbeat(false)
		h.placedOn(q, "pl-1")
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
