package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/agent"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/server"
)

// TestKeepsProcessesAliveThroughKillAndRestart: the agent runs the
// runtime configuration's two chat servers, replaces one killed with
// SIGKILL (one SERVER_PROCESS_CRASHED event, not two), and after an agent
// restart runs two again; stopping deregisters the compute.
func TestKeepsProcessesAliveThroughKillAndRestart(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 2)
	r := e.runAgent(t)
	victim := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	r.rec.wait(t, "launch", 2, kind(agent.EvLaunched))
	e.waitActive(t, 2)
	// The server is ACTIVE once ProcessReady is answered, a moment before
	// the chat server writes that it is ready: the kill waits for the line,
	// which the relaunch must then leave in the victim's log.
	stderrLog := filepath.Join(e.logDir, victim.PID+".stderr.log")
	exectest.Eventually(t, "the victim's stderr log to say it is ready", waitLimit, func() (bool, string) {
		b, _ := os.ReadFile(stderrLog)
		return strings.Contains(string(b), "chat server ready"), fmt.Sprintf("%q", b)
	})

	if err := syscall.Kill(victim.OSPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.rec.wait(t, "the crash report", 1, func(ev agent.Event) bool {
		return ev.Kind == agent.EvReported && ev.PID == victim.PID && ev.Detail == "SERVER_PROCESS_CRASHED"
	})
	back := r.rec.wait(t, "backoff", 1, kind(agent.EvBackoff))
	if back.Delay != time.Second {
		t.Fatalf("first relaunch delay %v, want 1s", back.Delay)
	}
	e.clock.Advance(time.Second)
	r.rec.wait(t, "the replacement", 3, kind(agent.EvLaunched))
	e.waitActive(t, 2)

	// The service's own lost-connection timer must not add a second event.
	e.clock.Advance(time.Minute)
	e.Server.Service().Sweep(context.Background())
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 1 || aws.ToString(got[0].ResourceId) != victim.PID {
		t.Fatalf("crash events: %+v", got)
	}
	logs, _ := filepath.Glob(filepath.Join(e.logDir, victim.PID+".std*.log"))
	if len(logs) != 2 {
		t.Fatalf("log files of %s: %v", victim.PID, logs)
	}
	if b, _ := os.ReadFile(stderrLog); !strings.Contains(string(b), "chat server ready") {
		t.Fatalf("stderr log of %s: %q", victim.PID, b)
	}

	if err := r.stop(t); err != nil {
		t.Fatalf("agent stopped with %v", err)
	}
	e.waitActive(t, 0)
	if _, err := e.gl.DescribeCompute(context.Background(), &gamelift.DescribeComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(compute)}); err == nil {
		t.Fatal("the compute is still registered after the agent stopped")
	}
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 1 {
		t.Fatalf("a graceful stop wrote crash events: %+v", got)
	}

	r2 := e.runAgent(t)
	r2.rec.wait(t, "launch after restart", 2, kind(agent.EvLaunched))
	e.waitActive(t, 2)
}

// TestTokenRefreshKeepsConnections: the agent gets a new auth token
// before the current one expires; the running servers move to new tokens
// through the service's RefreshConnection and stay connected after the
// first token expired; a server started afterwards uses the new token.
func TestTokenRefreshKeepsConnections(t *testing.T) {
	logs := &exectest.LogRecords{}
	e := start(t, func(c *server.Config) { c.AuthTokenTTL = 5 * time.Minute; c.Log = slog.New(logs) })
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t, func(c *agent.Config) { c.PollInterval = time.Hour })
	first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitActive(t, 1)

	e.clock.Advance(2*time.Minute + 30*time.Second) // half the token's life
	r.rec.wait(t, "a second token", 2, kind(agent.EvToken))

	e.clock.Advance(time.Minute) // within the service's refresh margin
	e.Server.Service().Sweep(context.Background())
	// The old connection closes normally once the process has moved.
	closed := map[string]string{"msg": "process connection closed", "pid": first.PID, "code": "1000"}
	exectest.Eventually(t, fmt.Sprintf("server log record %v", closed), waitLimit, func() (bool, string) { return logs.Has(closed), "none" })

	e.clock.Advance(2 * time.Minute) // the first token has expired
	e.Server.Service().Sweep(context.Background())
	e.waitActive(t, 1)
	if n, _ := r.rec.count(kind(agent.EvExited)); n != 0 {
		t.Fatalf("%d server processes exited across the refresh", n)
	}

	if err := syscall.Kill(first.OSPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.rec.wait(t, "backoff", 1, kind(agent.EvBackoff))
	e.clock.Advance(time.Second)
	r.rec.wait(t, "the replacement", 2, kind(agent.EvLaunched))
	e.waitActive(t, 1) // it connected with the agent's current token
}

// TestFollowsRuntimeConfiguration: raising ConcurrentExecutions launches
// more servers at the next poll; lowering it stops the extra ones
// gracefully (SIGTERM: they call ProcessEnding), with no crash events.
func TestFollowsRuntimeConfiguration(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitActive(t, 1)

	e.setRuntime(t, chatBinary, "-port 0", 3)
	e.clock.Advance(15 * time.Second)
	r.rec.wait(t, "scale up", 3, kind(agent.EvLaunched))
	e.waitActive(t, 3)

	e.setRuntime(t, chatBinary, "-port 0", 1)
	e.clock.Advance(15 * time.Second)
	r.rec.wait(t, "scale down", 2, kind(agent.EvStopping))
	r.rec.wait(t, "exits", 2, kind(agent.EvExited))
	e.waitActive(t, 1)
	if n, _ := r.rec.count(kind(agent.EvLaunched)); n != 3 {
		t.Fatalf("%d launches after scaling down, want 3", n)
	}
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 0 {
		t.Fatalf("scaling down wrote crash events: %+v", got)
	}
}

// TestBadLaunches: a launch path that does not exist writes
// SERVER_PROCESS_INVALID_PATH and a process that exits at once writes
// SERVER_PROCESS_CRASHED; both are retried only after a doubling backoff
// (1 s, 2 s, 4 s), never in a tight loop.
func TestBadLaunches(t *testing.T) {
	for _, tc := range []struct{ name, path, code, ev string }{
		{"missing path", "/nonexistent/gameserver", "SERVER_PROCESS_INVALID_PATH", agent.EvLaunchFailed},
		{"exits at once", "/bin/false", "SERVER_PROCESS_CRASHED", agent.EvExited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			e.setRuntime(t, tc.path, "", 1)
			r := e.runAgent(t)
			for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
				r.rec.wait(t, tc.ev, i+1, kind(tc.ev))
				got := r.rec.wait(t, "backoff", i+1, kind(agent.EvBackoff))
				if got.Delay != want {
					t.Fatalf("delay %d = %v, want %v", i+1, got.Delay, want)
				}
				r.rec.wait(t, "report", i+1, func(ev agent.Event) bool { return ev.Kind == agent.EvReported && ev.Detail == tc.code })
				if n, _ := r.rec.count(kind(tc.ev)); n != i+1 {
					t.Fatalf("%d attempts before the backoff ended, want %d", n, i+1)
				}
				e.clock.Advance(want)
			}
			if got := e.events(t, tc.code); len(got) < 3 {
				t.Fatalf("%s events: %d", tc.code, len(got))
			}
		})
	}
}

// TestFleetDeleted: when the fleet is deleted behind its back the agent
// stops its processes and Run returns ErrFleetGone.
func TestFleetDeleted(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitActive(t, 1)
	if _, err := e.gl.DeleteFleet(context.Background(), &gamelift.DeleteFleetInput{FleetId: aws.String(e.fleet)}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(15 * time.Second)
	select {
	case err := <-r.done:
		r.done <- err
		if !errors.Is(err, agent.ErrFleetGone) {
			t.Fatalf("Run = %v, want ErrFleetGone", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the agent kept running on a deleted fleet")
	}
	r.rec.wait(t, "exit", 1, kind(agent.EvExited))
}

// TestComputeDeregistered: a compute deregistered behind the agent's back
// is registered again, and its servers run again.
func TestComputeDeregistered(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitActive(t, 1)
	if _, err := e.gl.DeregisterCompute(context.Background(), &gamelift.DeregisterComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(compute)}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(15 * time.Second)
	r.rec.wait(t, "registration", 2, kind(agent.EvRegistered))
	if _, err := e.gl.DescribeCompute(context.Background(), &gamelift.DescribeComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(compute)}); err != nil {
		t.Fatal(err)
	}
}

// TestUnreachableService: an agent whose service is not there retries
// registration with a doubling backoff.
func TestUnreachableService(t *testing.T) {
	e := start(t)
	r := e.runAgent(t, func(c *agent.Config) { c.Endpoint = "http://127.0.0.1:1" })
	for i, want := range []time.Duration{time.Second, 2 * time.Second} {
		got := r.rec.wait(t, "service error", i+1, kind(agent.EvServiceError))
		if got.Delay != want || !strings.Contains(got.Detail, "RegisterCompute") {
			t.Fatalf("retry %d: %+v", i+1, got)
		}
		e.clock.Advance(want)
	}
}

// TestReportsSurviveAnOutage: an exit seen while the service is
// unreachable is queued and reported once it is back; nothing is lost.
func TestReportsSurviveAnOutage(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	proxy, down := e.outageProxy(t)
	r := e.runAgent(t, func(c *agent.Config) { c.Endpoint = proxy })
	first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitActive(t, 1)

	down.Store(true)
	if err := syscall.Kill(first.OSPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	failed := r.rec.wait(t, "a failed report", 1, func(ev agent.Event) bool {
		return ev.Kind == agent.EvServiceError && strings.HasPrefix(ev.Detail, "report:")
	})
	down.Store(false)
	e.clock.Advance(failed.Delay)
	r.rec.wait(t, "the delayed report", 1, func(ev agent.Event) bool {
		return ev.Kind == agent.EvReported && ev.PID == first.PID && ev.Detail == "SERVER_PROCESS_CRASHED"
	})
}

// TestRegistrationRefused: a registration the service refuses (the fleet
// does not exist) ends Run with a clear error instead of retrying.
func TestRegistrationRefused(t *testing.T) {
	e := start(t)
	r := e.runAgent(t, func(c *agent.Config) { c.FleetID = "fleet-00000000-0000-4000-8000-000000000000" })
	select {
	case err := <-r.done:
		r.done <- err
		if err == nil || !strings.Contains(err.Error(), "registering compute machine-1 to fleet fleet-00000000-0000-4000-8000-000000000000") {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the agent kept retrying a refused registration")
	}
}

// TestRegistrationRetriedWhileServiceFails: a service answering 503 is
// retried with backoff, then registration succeeds once it recovers.
func TestRegistrationRetriedWhileServiceFails(t *testing.T) {
	e := start(t)
	proxy, down := e.outageProxy(t)
	down.Store(true)
	r := e.runAgent(t, func(c *agent.Config) { c.Endpoint = proxy })
	failed := r.rec.wait(t, "a failed registration", 1, kind(agent.EvServiceError))
	down.Store(false)
	e.clock.Advance(failed.Delay)
	r.rec.wait(t, "registration", 1, kind(agent.EvRegistered))
}
