package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
)

// activeSession readies a raw process on a new compute, places a game
// session on it and activates it.
func (h *harness) activeSession(compute, pid string) (*rawProc, string) {
	h.t.Helper()
	p, id := h.activatingSession(compute, pid)
	p.ok("ActivateGameSession", map[string]any{"GameSessionId": id})
	return p, id
}

// activatingSession readies a raw process on a new compute and places a
// game session on it, left ACTIVATING.
func (h *harness) activatingSession(compute, pid string) (*rawProc, string) {
	h.t.Helper()
	p := h.dial(compute, pid, h.compute(compute, "10.0.0.7"))
	p.ready(7777)
	gs := h.mustCreate(nil)
	p.push("CreateGameSession")
	return p, aws.ToString(gs.GameSessionId)
}

// wantSession fails unless the game session has status and reason.
func (h *harness) wantSession(id string, status types.GameSessionStatus, reason types.GameSessionStatusReason) {
	h.t.Helper()
	gs := h.session(id)
	if gs.Status != status || gs.StatusReason != reason {
		h.t.Fatalf("game session %s is %s/%s, want %s/%s", id, gs.Status, gs.StatusReason, status, reason)
	}
	ended := status == types.GameSessionStatusTerminated || status == types.GameSessionStatusError
	if ended != (gs.TerminationTime != nil) {
		h.t.Errorf("game session %s: %s with TerminationTime %v", id, status, gs.TerminationTime)
	}
}

// wantEvents fails unless the fleet's events after its creation are
// exactly codes, each about resourceID.
func (h *harness) wantEvents(resourceID string, codes ...types.EventCode) []types.Event {
	h.t.Helper()
	var got []types.Event
	for _, e := range h.events() {
		switch e.EventCode {
		case types.EventCodeFleetCreated, types.EventCodeFleetStateActive, types.EventCodeFleetStateActivating,
			types.EventCodeFleetStateCreated, types.EventCodeFleetStateCreating, types.EventCodeFleetStatePending:
			continue
		}
		got = append(got, e)
	}
	if len(got) != len(codes) {
		h.t.Fatalf("events %v, want %v", eventCodes(got), codes)
	}
	for i, e := range got {
		if e.EventCode != codes[i] || aws.ToString(e.ResourceId) != resourceID || aws.ToString(e.Message) == "" {
			h.t.Errorf("event %d: %s about %s (%q), want %s about %s", i, e.EventCode, aws.ToString(e.ResourceId),
				aws.ToString(e.Message), codes[i], resourceID)
		}
	}
	return got
}

func eventCodes(list []types.Event) []types.EventCode {
	var out []types.EventCode
	for _, e := range list {
		out = append(out, e.EventCode)
	}
	return out
}

func TestActivationTimeoutFromRuntimeConfiguration(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		_, err := h.gl.UpdateRuntimeConfiguration(t.Context(), &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String(h.fleet),
			RuntimeConfiguration: &types.RuntimeConfiguration{GameSessionActivationTimeoutSeconds: aws.Int32(30),
				ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/game/server"), ConcurrentExecutions: aws.Int32(1)}}}})
		if err != nil {
			t.Fatal(err)
		}
		p, id := h.activatingSession("host-1", "proc-1")
		h.advance(29 * time.Second)
		h.wantSession(id, types.GameSessionStatusActivating, "")
		h.advance(time.Second)
		h.wantSession(id, types.GameSessionStatusError, "")
		h.wantEvents(id, types.EventCodeGameSessionActivationTimeout)

		a := p.call("ActivateGameSession", map[string]any{"GameSessionId": id})
		if status(a) < 400 || a["ErrorMessage"] == "" {
			t.Errorf("late ActivateGameSession answered %v", a)
		}
		h.wantSession(id, types.GameSessionStatusError, "")
	})
}

func TestActivationTimeoutDefaultsTo300Seconds(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activatingSession("host-1", "proc-1")
		for range 4 {
			h.advance(59 * time.Second)
			p.heartbeat(true)
		}
		h.advance(299*time.Second - 4*59*time.Second)
		h.wantSession(id, types.GameSessionStatusActivating, "")
		p.heartbeat(true)
		h.advance(time.Second)
		h.wantSession(id, types.GameSessionStatusError, "")
		h.wantEvents(id, types.EventCodeGameSessionActivationTimeout)
	})
}

// GameLift ends a process that has gone about three minutes without a
// healthy report; unhealthy reports do not stop that clock, however many
// come, and a healthy one restarts it.
func TestProcessEndsThreeMinutesAfterItsLastHealthyReport(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1") // healthy at t0
		for range 5 {
			h.advance(20 * time.Second)
			if a := p.heartbeat(false); status(a) != 200 {
				t.Fatalf("heartbeat answered %v", a)
			}
		}
		h.advance(20 * time.Second) // t0+2m
		p.heartbeat(true)
		for range 8 {
			h.advance(20 * time.Second)
			p.heartbeat(false)
		}
		h.advance(19 * time.Second) // t0+4m59s: 2m59s since the healthy report
		h.wantSession(id, types.GameSessionStatusActive, "")
		p.noPush()
		h.advance(time.Second)
		m := p.push("TerminateProcess")
		if _, ok := m["TerminationTime"]; !ok {
			t.Errorf("TerminateProcess without TerminationTime: %v", m)
		}
		// The SDK answers with ProcessEnding and closes: a normal exit.
		p.ok("TerminateServerProcess", nil)
		p.drop()
		h.advance(time.Minute)
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		if pr := h.process("host-1", "proc-1"); pr.Status != game.ProcessTerminated {
			t.Errorf("process is %s", pr.Status)
		}
		ev := h.wantEvents("proc-1", types.EventCodeServerProcessTerminatedUnhealthy)
		if msg := aws.ToString(ev[0].Message); !strings.Contains(msg, "no healthy report for 3m0s") {
			t.Errorf("event message %q", msg)
		}
		// An ended process does not come back.
		if _, st, err := h.dialQuery("/", h.procQuery("host-1", "proc-1", h.token("host-1"))); err == nil || st != 403 {
			t.Errorf("reconnect of an ended process: HTTP %d, %v", st, err)
		}
	})
}

// An unhealthy report that comes when the time is up ends the process at
// once, before any sweep.
func TestLateUnhealthyReportEndsTheProcess(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1")
		h.clock.Add(3 * time.Minute) // no sweep
		p.heartbeat(false)
		p.push("TerminateProcess")
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		h.wantEvents("proc-1", types.EventCodeServerProcessTerminatedUnhealthy)
	})
}

func TestSilentProcessEndsAfterThreeMinutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1")
		h.advance(179 * time.Second)
		h.wantSession(id, types.GameSessionStatusActive, "")
		h.advance(time.Second)
		p.push("TerminateProcess")
		p.drop() // without ProcessEnding: it was ended already, so no crash
		waitFor(t, "the disconnection", func() bool { return !h.process("host-1", "proc-1").Connected })
		h.advance(time.Minute)
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		h.wantEvents("proc-1", types.EventCodeServerProcessTerminatedUnhealthy)
	})
}

// --unhealthy-timeout sets the limit; a process that never reports healthy
// after ProcessReady is judged from its activation.
func TestUnhealthyTimeoutIsConfigurable(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p := h.dial("host-1", "proc-1", h.compute("host-1", "10.0.0.7"))
		p.ok("ActivateServerProcess", map[string]any{"SdkVersion": "5.4.0", "SdkLanguage": "Cpp", "Port": 7777})
		p.heartbeat(false)
		h.advance(29 * time.Second)
		p.heartbeat(false)
		p.noPush()
		h.advance(time.Second)
		p.push("TerminateProcess")
		h.wantEvents("proc-1", types.EventCodeServerProcessTerminatedUnhealthy)
	}, func(c *server.Config) { c.UnhealthyTimeout = 30 * time.Second })
}

func TestReconnectWithinGraceKeepsProcessAndSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1")
		p.drop()
		waitFor(t, "the disconnection to be recorded", func() bool { return !h.process("host-1", "proc-1").Connected })
		h.advance(29 * time.Second)
		h.wantSession(id, types.GameSessionStatusActive, "")

		again := h.dial("host-1", "proc-1", h.token("host-1"))
		waitFor(t, "the reconnection to be recorded", func() bool { return h.process("host-1", "proc-1").Connected })
		h.advance(60 * time.Second)
		h.wantSession(id, types.GameSessionStatusActive, "")
		again.heartbeat(true) // no second ActivateServerProcess: the SDKs never resend it
		// Pushes reach the new connection.
		if _, err := h.gl.TerminateGameSession(t.Context(), &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id),
			TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
			t.Fatal(err)
		}
		again.push("TerminateProcess")
		h.wantEvents(h.fleet)
	})
}

func TestLostProcessEndsItsSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		active, activeID := h.activeSession("host-1", "proc-1")
		activating, activatingID := h.activatingSession("host-2", "proc-2")
		active.drop()
		activating.drop()
		waitFor(t, "the disconnections to be recorded", func() bool {
			return !h.process("host-1", "proc-1").Connected && !h.process("host-2", "proc-2").Connected
		})
		h.advance(30 * time.Second)
		h.wantSession(activeID, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		h.wantSession(activatingID, types.GameSessionStatusError, "")
		crashed := h.eventsWith(types.EventCodeServerProcessCrashed)
		if len(crashed) != 2 || len(h.events()) != len(crashed)+countFleetEvents(h) {
			t.Errorf("events %v, want two SERVER_PROCESS_CRASHED", eventCodes(h.events()))
		}
		if _, st, err := h.dialQuery("/", h.procQuery("host-1", "proc-1", h.token("host-1"))); err == nil || st != 403 {
			t.Errorf("reconnect of a lost process: HTTP %d, %v", st, err)
		}
	})
}

// countFleetEvents counts the fleet's own lifecycle events.
func countFleetEvents(h *harness) int {
	n := 0
	for _, e := range h.events() {
		if e.EventCode != types.EventCodeServerProcessCrashed && e.EventCode != types.EventCodeServerProcessTerminatedUnhealthy &&
			e.EventCode != types.EventCodeGameSessionActivationTimeout {
			n++
		}
	}
	return n
}

// GameLift calls onUpdateGameSession with match backfill results only
// (matchmaking_test.go); a control-plane UpdateGameSession changes the
// record and sends the process nothing.
func TestPlainUpdateGameSessionIsNotPushed(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1")
		out, err := h.gl.UpdateGameSession(t.Context(), &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id),
			MaximumPlayerSessionCount: aws.Int32(6), Name: aws.String("renamed"),
			GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ffa")}}})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToInt32(out.GameSession.MaximumPlayerSessionCount) != 6 || aws.ToString(out.GameSession.Name) != "renamed" {
			t.Errorf("UpdateGameSession answered %+v", out.GameSession)
		}
		p.noPush()
		if gs := h.session(id); aws.ToInt32(gs.MaximumPlayerSessionCount) != 6 {
			t.Errorf("stored session %+v", gs)
		}
	})
}
