package agent_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/agent"
)

// wrapParams are the sdkless game's parameters as a template, and
// wrapEnv the environment's, as leading words of the parameters.
const (
	wrapParams = "-port {{.GamePort}} -session {{.GameSessionId}} -mode {{.Property.mode}}"
	wrapEnv    = "'GAME_DATA={{.GameSessionData}}' GAME_PLAYERS={{.MaximumPlayerSessionCount}}"
)

// runWrapped starts an agent wrapping n copies of the sdkless game with
// params (after wrapParams).
func (e *env) runWrapped(t testing.TB, params string, n int32, adjust ...func(*agent.Config)) *running {
	t.Helper()
	e.setRuntime(t, sdklessBinary, strings.TrimSpace(wrapEnv+" "+wrapParams+" "+params), n)
	return e.runAgent(t, append([]func(*agent.Config){func(c *agent.Config) {
		c.LocalSDK = "127.0.0.1:0"
		c.Wrap = &agent.Wrap{}
	}}, adjust...)...)
}

// create creates a game session of mode ctf with some game session data.
func (e *env) create(t testing.TB) *gamelift.CreateGameSessionOutput {
	t.Helper()
	gs, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(3),
		GameProperties:  []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ctf")}},
		GameSessionData: aws.String("two words"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// TestWrappedGame: a game binary without an SDK is hosted by the agent's
// wrapper: the process is ready before any binary runs; a game session
// starts the binary with the session's values in its arguments and
// environment, is activated once the binary listens (TCP, or a bound UDP
// socket), and ends when the binary exits after its player left; the slot
// is ready again at once, with no crash event.
func TestWrappedGame(t *testing.T) {
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			e := start(t)
			extra := "-start-delay 50ms"
			if proto == "udp" {
				extra += " -udp"
			}
			r := e.runWrapped(t, extra, 1)
			first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
			e.waitIdle(t)
			if n, _ := r.rec.count(kind(agent.EvStarted)); n != 0 {
				t.Fatal("the game binary started before a game session")
			}
			gs := e.create(t)
			id := aws.ToString(gs.GameSession.GameSessionId)
			started := r.rec.wait(t, "the game's start", 1, kind(agent.EvStarted))
			e.waitSession(t, gs, types.GameSessionStatusActive)
			if act := r.rec.wait(t, "the activation", 1, kind(agent.EvActivated)); act.Delay < 50*time.Millisecond {
				t.Fatalf("activated %v after the start, before the game listened", act.Delay)
			}
			ps, err := e.gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{
				GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String("player-1")})
			if err != nil {
				t.Fatal(err)
			}
			if got := play(t, proto, ps.PlayerSession); got != "bye" {
				t.Fatalf("the game answered %q", got)
			}
			e.waitSession(t, gs, types.GameSessionStatusTerminated)
			if got := r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing)); got.PID != first.PID || got.Detail != "it hosted a game session" {
				t.Fatalf("replacing %+v", got)
			}
			r.rec.wait(t, "the relaunch", 2, kind(agent.EvLaunched))
			e.waitIdle(t)
			if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 0 {
				t.Fatalf("crash events: %+v", got)
			}

			out, _ := os.ReadFile(filepath.Join(e.logDir, first.PID+".stdout.log"))
			port := strconv.Itoa(int(aws.ToInt32(gs.GameSession.Port)))
			for _, want := range []string{
				`args: ["-port" "` + port + `" "-session" "` + id + `" "-mode" "ctf"`,
				"env: GAME_DATA=two words", "env: GAME_PLAYERS=3", "env: ANYLIFT_GAME_PORT=" + port,
				"env: ANYLIFT_GAME_SESSION_ID=" + id, `env: ANYLIFT_GAME_PROPERTIES={"mode":"ctf"}`,
				"env: ANYLIFT_LOG_DIR=" + filepath.Join(e.logDir, first.PID), "env: ANYLIFT_SDK_HTTP=http://127.0.0.1:",
				"player left: " + aws.ToString(ps.PlayerSession.PlayerSessionId),
			} {
				if !strings.Contains(string(out), want) {
					t.Fatalf("the game's output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(string(out), "GAMELIFT_SDK_") {
				t.Fatalf("the wrapped game was given the SDK's variables:\n%s", out)
			}
			if started.OSPID == 0 {
				t.Fatalf("started %+v", started)
			}
		})
	}
}

// play is the player of session s: it sends its player session id over
// proto and returns the game's answer.
func play(t testing.TB, proto string, s *types.PlayerSession) string {
	t.Helper()
	if proto == "tcp" {
		return talk(t, s, aws.ToString(s.PlayerSessionId))
	}
	c, err := net.Dial("udp", net.JoinHostPort(aws.ToString(s.IpAddress), strconv.Itoa(int(aws.ToInt32(s.Port)))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(aws.ToString(s.PlayerSessionId) + "\n"))
	c.SetReadDeadline(time.Now().Add(waitLimit))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(buf[:n]))
}

// TestWrappedGameTerminated: TerminateGameSession reaches the wrapped
// binary as SIGTERM; a binary that ignores it is killed after the stop
// timeout, which the service records as a forced termination. Either
// way the slot is ready again at once.
func TestWrappedGameTerminated(t *testing.T) {
	for _, tc := range []struct {
		name, params, event string
	}{
		{"obeys", "", ""},
		{"ignores SIGTERM", "-ignore-term", "SERVER_PROCESS_FORCE_TERMINATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			r := e.runWrapped(t, tc.params, 1)
			first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
			e.waitIdle(t)
			gs := e.create(t)
			e.waitSession(t, gs, types.GameSessionStatusActive)
			_, err := e.gl.TerminateGameSession(context.Background(), &gamelift.TerminateGameSessionInput{
				GameSessionId: gs.GameSession.GameSessionId, TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
			if err != nil {
				t.Fatal(err)
			}
			stopping := r.rec.wait(t, "the stop", 1, kind(agent.EvStopping))
			if stopping.PID != first.PID || !strings.Contains(stopping.Detail, "TerminateProcess") {
				t.Fatalf("stopping %+v", stopping)
			}
			if tc.event != "" {
				logged(t, e, first.PID, "ignoring SIGTERM")
				e.clock.Advance(10 * time.Second) // the agent's StopTimeout in these tests
			}
			e.waitSession(t, gs, types.GameSessionStatusTerminated)
			r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing))
			e.waitIdle(t)
			if tc.event == "" {
				logged(t, e, first.PID, "terminated")
			}
			for _, code := range []string{"SERVER_PROCESS_CRASHED", "SERVER_PROCESS_FORCE_TERMINATED", "SERVER_PROCESS_TERMINATED_UNHEALTHY"} {
				want := 0
				if code == tc.event {
					want = 1
				}
				if got := e.events(t, code); len(got) != want {
					t.Fatalf("%s events: %+v", code, got)
				}
			}
		})
	}
}

// logged waits until the process's standard output holds line.
func logged(t testing.TB, e *env, pid, line string) {
	t.Helper()
	path := filepath.Join(e.logDir, pid+".stdout.log")
	deadline := time.Now().Add(waitLimit)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), line+"\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never printed %q:\n%s", pid, line, b)
		}
		time.Sleep(10 * time.Millisecond) // another process writes the file
	}
}

// TestWrappedGameThatNeverListens: a binary that does not listen within
// the listen timeout is stopped, and its session, never activated, ends
// in ERROR.
func TestWrappedGameThatNeverListens(t *testing.T) {
	e := start(t)
	r := e.runWrapped(t, "-start-delay 1h", 1)
	e.waitIdle(t)
	gs := e.create(t)
	r.rec.wait(t, "the game's start", 1, kind(agent.EvStarted))
	e.clock.Advance(time.Minute)
	stopping := r.rec.wait(t, "the stop", 1, kind(agent.EvStopping))
	if !strings.Contains(stopping.Detail, "did not listen on port") {
		t.Fatalf("stopping %+v", stopping)
	}
	e.waitSession(t, gs, types.GameSessionStatusError)
	r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing))
	if n, _ := r.rec.count(kind(agent.EvActivated)); n != 0 {
		t.Fatal("a game that never listened was activated")
	}
}

// TestWrappedIdleProcessesScaleDown: wrapped processes waiting for a game
// session end with ProcessEnding when the runtime configuration drops
// them, and their ports are handed out again.
func TestWrappedIdleProcessesScaleDown(t *testing.T) {
	e := start(t)
	r := e.runWrapped(t, "", 2, func(c *agent.Config) { c.Wrap.PortMin, c.Wrap.PortMax = 41000, 41001 })
	r.rec.wait(t, "launch", 2, kind(agent.EvLaunched))
	e.waitActive(t, 2)
	e.setRuntime(t, sdklessBinary, wrapEnv+" "+wrapParams, 1)
	e.clock.Advance(15 * time.Second)
	r.rec.wait(t, "the stop", 1, kind(agent.EvStopping))
	r.rec.wait(t, "the exit", 1, kind(agent.EvExited))
	e.waitActive(t, 1)
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 0 {
		t.Fatalf("crash events: %+v", got)
	}
	e.setRuntime(t, sdklessBinary, wrapEnv+" "+wrapParams, 2)
	e.clock.Advance(15 * time.Second)
	r.rec.wait(t, "a launch on the freed port", 3, kind(agent.EvLaunched))
	e.waitActive(t, 2)
	if n, _ := r.rec.count(kind(agent.EvLaunchFailed)); n != 0 {
		t.Fatalf("%d launches failed", n)
	}
}
