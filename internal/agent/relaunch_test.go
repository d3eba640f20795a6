package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/agent"
	"github.com/anylift/anylift/internal/exectest"
)

// TestOneMatchServersAreReplacedAtOnce: a server that hosts one match,
// calls ProcessEnding and exits 0 is replaced at once, as GameLift keeps
// the runtime configuration's processes running: 100 matches in a row
// through one slot, each created as soon as the fleet shows an idle
// process, with no FleetCapacityExceededException and no backoff. The
// agent's clock never moves, so a delay would stop the test. A match ends
// when its one player leaves (the chat server ends its game session then),
// so it lasts as long as the test wants.
func TestOneMatchServersAreReplacedAtOnce(t *testing.T) {
	const matches = 100
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	for i := range matches {
		e.waitIdle(t)
		gs, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
			FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2),
		})
		if err != nil {
			t.Fatalf("match %d: CreateGameSession: %v", i+1, err)
		}
		e.playMatch(t, gs)
	}
	if n, _ := r.rec.count(kind(agent.EvBackoff)); n != 0 {
		t.Fatalf("%d relaunches were delayed", n)
	}
	r.rec.wait(t, "the replacements", matches, kind(agent.EvReplacing))
	r.rec.wait(t, "launches", matches+1, kind(agent.EvLaunched))
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 0 {
		t.Fatalf("clean ends wrote crash events: %+v", got)
	}
}

// TestHostedProcessCrashIsReplacedAtOnce: a process that dies while
// hosting a game session is reported as crashed, but its slot is not
// backed off: it takes a new placement to host again, so it cannot loop.
func TestHostedProcessCrashIsReplacedAtOnce(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	victim := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitIdle(t)
	gs, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSession(t, gs, types.GameSessionStatusActive)
	if err := syscall.Kill(victim.OSPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.rec.wait(t, "the crash report", 1, func(ev agent.Event) bool {
		return ev.Kind == agent.EvReported && ev.PID == victim.PID && ev.Detail == "SERVER_PROCESS_CRASHED"
	})
	r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing))
	r.rec.wait(t, "the relaunch", 2, kind(agent.EvLaunched))
	e.waitIdle(t)
	if n, _ := r.rec.count(kind(agent.EvBackoff)); n != 0 {
		t.Fatalf("%d relaunches were delayed", n)
	}
}

// TestCrashLoopIsBackedOffAndShown: a server that exits with an error at
// once is relaunched after 1 s, 2 s, 4 s; each exit is a
// SERVER_PROCESS_CRASHED fleet event, and the agent's log shows at
// warning level (anylift dev's default) the crash and the process's last
// lines of output, both streams, the last ten of each.
func TestCrashLoopIsBackedOffAndShown(t *testing.T) {
	dir := t.TempDir()
	script, tokenFile := filepath.Join(dir, "broken-server"), filepath.Join(dir, "token")
	var body strings.Builder
	body.WriteString("#!/bin/sh\n")
	// Written aside and renamed, so the test never reads a file half
	// written by a later launch.
	fmt.Fprintf(&body, "printf %%s \"$GAMELIFT_SDK_AUTH_TOKEN\" > %s.$$ && mv %s.$$ %s\n", tokenFile, tokenFile, tokenFile)
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&body, "echo 'loading map %d'\n", i)
	}
	body.WriteString("echo \"auth token: $GAMELIFT_SDK_AUTH_TOKEN\"\n")
	body.WriteString("echo 'fatal: config file /etc/game.cfg not found' >&2\nexit 3\n")
	if err := os.WriteFile(script, []byte(body.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	terminal := &exectest.SyncBuffer{}
	e := start(t)
	e.setRuntime(t, script, "", 1)
	r := e.runAgent(t, func(c *agent.Config) {
		c.Log = slog.New(slog.NewTextHandler(terminal, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		got := r.rec.wait(t, "backoff", i+1, kind(agent.EvBackoff))
		if got.Delay != want {
			t.Fatalf("delay %d = %v, want %v", i+1, got.Delay, want)
		}
		if n, _ := r.rec.count(kind(agent.EvLaunched)); n != i+1 {
			t.Fatalf("%d launches before the delay ended, want %d", n, i+1)
		}
		e.clock.Advance(want)
	}
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) < 3 {
		t.Fatalf("SERVER_PROCESS_CRASHED events: %d", len(got))
	}
	out := terminal.String()
	for _, want := range []string{
		`level=WARN msg="server process crashed; next launch delayed"`, `exit="exit status 3"`, "delay=1s", "event=SERVER_PROCESS_CRASHED",
		`stream=stderr line="fatal: config file /etc/game.cfg not found"`,
		`stream=stdout line="loading map 12"`, `stream=stdout line="loading map 4"`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `line="loading map 3"`) {
		t.Fatalf("the log shows more than the last ten lines:\n%s", out)
	}
	// The server printed its auth token: the log shows only its start.
	token, err := os.ReadFile(tokenFile)
	if err != nil || len(token) < 8 {
		t.Fatalf("the token the server was given: %q %v", token, err)
	}
	if !strings.Contains(out, `line="auth token: `+string(token[:4])+"…") || strings.Contains(out, string(token)) {
		t.Fatalf("the auth token is not redacted:\n%s", out)
	}
}

// TestProcessEndingWithoutHostingIsReplacedAtOnce: a server that was
// ready and ends on its own with ProcessEnding without hosting anything
// (an idle timeout, an operator's Ctrl-C) is replaced at once. One killed
// while idle is a crash instead (TestKeepsProcessesAliveThroughKillAndRestart).
func TestProcessEndingWithoutHostingIsReplacedAtOnce(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	r := e.runAgent(t)
	first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitIdle(t)
	// The chat server calls ProcessEnding and exits 0 on SIGINT; sent to
	// it directly, the agent has not asked it to stop.
	if err := syscall.Kill(first.OSPID, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	got := r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing))
	if got.PID != first.PID || got.Detail != "it called ProcessEnding" {
		t.Fatalf("replacing %+v", got)
	}
	r.rec.wait(t, "the relaunch", 2, kind(agent.EvLaunched))
	e.waitIdle(t)
}

// waitIdle waits until the fleet shows one ACTIVE process hosting
// nothing, as a backend watching DescribeFleetUtilization would.
func (e *env) waitIdle(t testing.TB) {
	t.Helper()
	exectest.Eventually(t, "an idle server process", waitLimit, func() (bool, string) {
		out, err := e.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{e.fleet}})
		if err != nil {
			t.Fatal(err)
		}
		u := out.FleetUtilization[0]
		procs, sessions := aws.ToInt32(u.ActiveServerProcessCount), aws.ToInt32(u.ActiveGameSessionCount)
		return procs == 1 && sessions == 0, fmt.Sprintf("%d processes, %d sessions", procs, sessions)
	})
}

// waitSession waits until gs has status.
func (e *env) waitSession(t testing.TB, gs *gamelift.CreateGameSessionOutput, status types.GameSessionStatus) {
	t.Helper()
	id := aws.ToString(gs.GameSession.GameSessionId)
	exectest.Eventually(t, fmt.Sprintf("game session %s", status), waitLimit, func() (bool, string) {
		out, err := e.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		got := out.GameSessions[0].Status
		return got == status, string(got)
	})
}

// playMatch plays a match of the chat server: once the session is ACTIVE
// a player joins and leaves, which ends the session; it returns when the
// session is TERMINATED.
func (e *env) playMatch(t testing.TB, gs *gamelift.CreateGameSessionOutput) {
	t.Helper()
	e.waitSession(t, gs, types.GameSessionStatusActive)
	e.join(t, gs)
	e.waitSession(t, gs, types.GameSessionStatusTerminated)
}

// join has a player join the ACTIVE session gs of a chat server and
// leave, which ends the match.
func (e *env) join(t testing.TB, gs *gamelift.CreateGameSessionOutput) {
	t.Helper()
	ps, err := e.gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{
		GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String("player-1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := ps.PlayerSession
	c, err := net.DialTimeout("tcp", net.JoinHostPort(aws.ToString(s.IpAddress), strconv.Itoa(int(aws.ToInt32(s.Port)))), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s\n", aws.ToString(s.PlayerSessionId))
	c.SetReadDeadline(time.Now().Add(waitLimit))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "OK\n" {
		t.Fatalf("joining: %q, %v", line, err)
	}
}

// TestNotReadyInTimeIsStopped: a process that has not called ProcessReady
// 5 minutes after its launch (here: it never even connects) gets
// GameLift's timeout event, is stopped, and its slot is backed off.
func TestNotReadyInTimeIsStopped(t *testing.T) {
	script := filepath.Join(t.TempDir(), "stuck-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'waiting for a license server'\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := start(t)
	e.setRuntime(t, script, "", 1)
	r := e.runAgent(t)
	stuck := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.clock.Advance(5 * time.Minute)
	r.rec.wait(t, "the timeout report", 1, func(ev agent.Event) bool {
		return ev.Kind == agent.EvReported && ev.PID == stuck.PID && ev.Detail == "SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT"
	})
	r.rec.wait(t, "the stop", 1, kind(agent.EvStopping))
	got := r.rec.wait(t, "backoff", 1, kind(agent.EvBackoff))
	if got.PID != stuck.PID || got.Delay != time.Second {
		t.Fatalf("backoff %+v", got)
	}
	if n := len(e.events(t, "SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT")); n != 1 {
		t.Fatalf("%d timeout events", n)
	}
	if n := len(e.events(t, "SERVER_PROCESS_CRASHED")); n != 0 {
		t.Fatalf("%d crash events besides the timeout", n)
	}
}

// TestCleanEndDuringAnOutage: while the service cannot be asked how a
// process ended, its exit counts as a crash (1 s); once the report goes
// through and says the process hosted a match, the waiting slot starts
// at once.
func TestCleanEndDuringAnOutage(t *testing.T) {
	e := start(t)
	e.setRuntime(t, chatBinary, "-port 0", 1)
	proxy, down := e.outageProxy(t)
	r := e.runAgent(t, func(c *agent.Config) { c.Endpoint = proxy })
	first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitIdle(t)
	gs, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true) // the game server talks to the service directly; the agent goes through the proxy
	e.playMatch(t, gs)
	got := r.rec.wait(t, "backoff", 1, kind(agent.EvBackoff))
	if got.PID != first.PID || got.Delay != time.Second {
		t.Fatalf("backoff %+v", got)
	}
	down.Store(false)
	e.clock.Advance(time.Second)
	if got := r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing)); got.PID != first.PID {
		t.Fatalf("replacing %+v", got)
	}
	r.rec.wait(t, "the relaunch", 2, kind(agent.EvLaunched))
	e.waitIdle(t)
}
