package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
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

// python3 is the Python interpreter, or the test is skipped (not under CI).
func python3(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required under CI")
		}
		t.Skip("python3 is not installed")
	}
	return path
}

// TestPythonGameServerThroughTheLocalSDK: a game server written in Python
// with nothing but its standard library (testdata/localsdk_game.py) hosts
// a game session through the agent's local SDK over HTTP: ready, the
// start event by long poll, activate, a player who connects accepted and
// described, removed, ProcessEnding, exit 0. The agent holds its SDK
// connection; the service sees a process that hosted a match and ended
// cleanly, and the slot is refilled at once.
func TestPythonGameServerThroughTheLocalSDK(t *testing.T) {
	python := python3(t)
	script, err := filepath.Abs("testdata/localsdk_game.py")
	if err != nil {
		t.Fatal(err)
	}
	e := start(t)
	e.setRuntime(t, python, agent.JoinParameters([]string{"-u", script}), 1)
	r := e.runAgent(t, func(c *agent.Config) { c.LocalSDK = "127.0.0.1:0" })
	first := r.rec.wait(t, "launch", 1, kind(agent.EvLaunched))
	e.waitIdle(t)

	ctx := context.Background()
	gs, err := e.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(4),
		GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ffa")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSession(t, gs, types.GameSessionStatusActive)
	ps, err := e.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{
		GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String("player-py"),
	})
	if err != nil {
		t.Fatal(err)
	}
	psid := aws.ToString(ps.PlayerSession.PlayerSessionId)
	if got := talk(t, ps.PlayerSession, psid); got != "welcome player-py" {
		t.Fatalf("the game answered %q", got)
	}
	e.waitSession(t, gs, types.GameSessionStatusTerminated)
	got := r.rec.wait(t, "the replacement", 1, kind(agent.EvReplacing))
	if got.PID != first.PID || got.Detail != "it hosted a game session" {
		t.Fatalf("replacing %+v", got)
	}
	r.rec.wait(t, "the relaunch", 2, kind(agent.EvLaunched))
	e.waitIdle(t)

	seats, err := e.gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(psid)})
	if err != nil {
		t.Fatal(err)
	}
	if st := seats.PlayerSessions[0].Status; st != types.PlayerSessionStatusCompleted {
		t.Fatalf("the player session is %s", st)
	}
	out, _ := os.ReadFile(filepath.Join(e.logDir, first.PID+".stdout.log"))
	for _, want := range []string{"ready " + first.PID,
		fmt.Sprintf("starting game session %s mode ffa max players 4", aws.ToString(gs.GameSession.GameSessionId)),
		"activated", "accepted " + psid + " of player-py now ACTIVE", "ended"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the game's output lacks %q:\n%s", want, out)
		}
	}
	if got := e.events(t, "SERVER_PROCESS_CRASHED"); len(got) != 0 {
		t.Fatalf("crash events: %+v", got)
	}
}

// talk connects to the game of player session s as its player, sends
// line and returns the game's first answer; then it hangs up.
func talk(t testing.TB, s *types.PlayerSession, line string) string {
	t.Helper()
	addr := net.JoinHostPort(aws.ToString(s.IpAddress), strconv.Itoa(int(aws.ToInt32(s.Port))))
	c, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s\n", line)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	answer, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the game's answer: %v", err)
	}
	return strings.TrimSpace(answer)
}
