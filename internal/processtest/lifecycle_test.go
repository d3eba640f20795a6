package processtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
)

// player is a game client of the chat server.
type player struct {
	c  net.Conn
	in *bufio.Reader
}

// join connects to a game session's address and sends the player session
// id; it returns the server's first line ("OK" or "ERR ...").
func join(t *testing.T, gs types.GameSession, playerSessionID string) (*player, string) {
	t.Helper()
	addr := net.JoinHostPort(aws.ToString(gs.IpAddress), fmt.Sprint(aws.ToInt32(gs.Port)))
	c, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := &player{c: c, in: bufio.NewReader(c)}
	fmt.Fprintf(c, "%s\n", playerSessionID)
	return p, p.line(t)
}

// line reads one line from the server.
func (p *player) line(t *testing.T) string {
	t.Helper()
	p.c.SetReadDeadline(time.Now().Add(waitLimit))
	s, err := p.in.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from the game server: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\n")
}

func (p *player) say(t *testing.T, s string) {
	t.Helper()
	if _, err := fmt.Fprintf(p.c, "%s\n", s); err != nil {
		t.Fatal(err)
	}
}

// TestChatGameEndToEnd runs the example game server as real OS processes:
// placement, players admitted by player session id, capacity, the last
// player ending the game, a kill -9, and TerminateGameSession.
func TestChatGameEndToEnd(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, opts)
			servers := map[string]*gameServer{} // chat-3 takes its values from GAMELIFT_SDK_*
			for i := 1; i <= 3; i++ {
				pid := fmt.Sprintf("chat-%d", i)
				servers[pid] = e.launch(t, pid, i == 3)
			}
			e.waitProcesses(t, 3)
			for pid := range servers {
				p := e.process(t, e.fleet, pid)
				if p.SDKLanguage != "Go" || p.Port == 0 {
					t.Errorf("process %s recorded with SDK language %q and port %d", pid, p.SDKLanguage, p.Port)
				}
			}

			gs1 := playUntilEmpty(t, e, servers)
			gs2, gs3 := fillFleet(t, e)
			crashMidGame(t, e, servers, gs2)
			terminateFromAPI(t, e, servers, gs3)
			stopWithSignal(t, e)
			if st := e.gameSession(t, gs1).Status; st != types.GameSessionStatusTerminated {
				t.Errorf("first game session is %s at the end", st)
			}
		})
	}
}

// playUntilEmpty places a game session, seats two players through the real
// game protocol, and checks that their leaving completes their sessions,
// ends the game session and makes the process exit 0.
func playUntilEmpty(t *testing.T, e *env, servers map[string]*gameServer) string {
	id, err := e.createSession(t, 4)
	if err != nil {
		t.Fatal(err)
	}
	gs := e.waitSession(t, id, types.GameSessionStatusActive)
	if aws.ToString(gs.IpAddress) != "127.0.0.1" || aws.ToInt32(gs.Port) == 0 {
		t.Fatalf("ACTIVE game session at %s:%d", aws.ToString(gs.IpAddress), aws.ToInt32(gs.Port))
	}
	host := servers[e.host(t, id)]

	alice, bob := e.reserve(t, id, "alice"), e.reserve(t, id, "bob")
	a, got := join(t, gs, alice)
	if got != "OK" {
		t.Fatalf("alice joining: %q", got)
	}
	e.waitPlayer(t, alice, types.PlayerSessionStatusActive)
	if _, got := join(t, gs, alice); !strings.HasPrefix(got, "ERR") {
		t.Errorf("a player session used twice was let in: %q", got)
	}
	if _, got := join(t, gs, "psess-00000000-0000-0000-0000-000000000000"); !strings.HasPrefix(got, "ERR") {
		t.Errorf("an unknown player session was let in: %q", got)
	}
	b, got := join(t, gs, bob)
	if got != "OK" {
		t.Fatalf("bob joining: %q", got)
	}
	e.waitPlayer(t, bob, types.PlayerSessionStatusActive)
	a.say(t, "hello bob")
	if got := b.line(t); got != alice+": hello bob" {
		t.Errorf("bob heard %q", got)
	}
	if n := aws.ToInt32(e.gameSession(t, id).CurrentPlayerSessionCount); n != 2 {
		t.Errorf("CurrentPlayerSessionCount %d with two players in", n)
	}

	a.c.Close()
	e.waitPlayer(t, alice, types.PlayerSessionStatusCompleted)
	if st := e.gameSession(t, id).Status; st != types.GameSessionStatusActive {
		t.Errorf("game session %s with one player left", st)
	}
	b.c.Close()
	e.waitPlayer(t, bob, types.PlayerSessionStatusCompleted)
	e.waitSession(t, id, types.GameSessionStatusTerminated)
	if code := host.waitExit(t); code != 0 {
		t.Errorf("the game server exited with %d after its last player left", code)
	}
	e.waitProcesses(t, 2)
	return id
}

// fillFleet places a game session on each of the two remaining processes
// and checks that a third is refused and that utilization counts them.
func fillFleet(t *testing.T, e *env) (string, string) {
	var ids []string
	for range 2 {
		id, err := e.createSession(t, 2)
		if err != nil {
			t.Fatal(err)
		}
		e.waitSession(t, id, types.GameSessionStatusActive)
		ids = append(ids, id)
	}
	_, err := e.createSession(t, 2)
	var full *types.FleetCapacityExceededException
	if !errors.As(err, &full) {
		t.Fatalf("CreateGameSession with every process busy: %v, want FleetCapacityExceededException", err)
	}
	u := e.utilization(t)
	if aws.ToInt32(u.ActiveServerProcessCount) != 2 || aws.ToInt32(u.ActiveGameSessionCount) != 2 {
		t.Errorf("utilization: %d active processes, %d active game sessions; want 2 and 2",
			aws.ToInt32(u.ActiveServerProcessCount), aws.ToInt32(u.ActiveGameSessionCount))
	}
	return ids[0], ids[1]
}

// crashMidGame kills the game server hosting id with a player in: once its
// connection has been gone for the grace period, the session ends
// TERMINATED/INTERRUPTED and the fleet event SERVER_PROCESS_CRASHED is
// written.
func crashMidGame(t *testing.T, e *env, servers map[string]*gameServer, id string) {
	gs := e.gameSession(t, id)
	carol := e.reserve(t, id, "carol")
	if _, got := join(t, gs, carol); got != "OK" {
		t.Fatalf("carol joining: %q", got)
	}
	e.waitPlayer(t, carol, types.PlayerSessionStatusActive)
	pid := e.host(t, id)
	servers[pid].kill9(t)
	eventually(t, "the killed process to be seen disconnected", func() (bool, string) {
		p := e.process(t, e.fleet, pid)
		return !p.Connected, "still connected"
	})
	e.clock.Advance(lostGrace + time.Second)
	e.Server.Service().Sweep(context.Background())
	got := e.waitSession(t, id, types.GameSessionStatusTerminated)
	if got.StatusReason != types.GameSessionStatusReasonInterrupted {
		t.Errorf("killed game server's session ended with reason %q, want INTERRUPTED", got.StatusReason)
	}
	if st := e.playerStatus(t, carol); st != types.PlayerSessionStatusCompleted {
		t.Errorf("the killed game's player is %s", st)
	}
	found := false
	for _, ev := range e.events(t) {
		found = found || (ev.EventCode == types.EventCodeServerProcessCrashed && aws.ToString(ev.ResourceId) == pid)
	}
	if !found {
		t.Errorf("no SERVER_PROCESS_CRASHED event for %s in %v", pid, e.events(t))
	}
}

// terminateFromAPI ends the last game with TerminateGameSession
// (TRIGGER_ON_PROCESS_TERMINATE): the game server is told, ends itself
// cleanly, and the session is TERMINATED.
func terminateFromAPI(t *testing.T, e *env, servers map[string]*gameServer, id string) {
	host := servers[e.host(t, id)]
	_, err := e.gl.TerminateGameSession(context.Background(), &gamelift.TerminateGameSessionInput{
		GameSessionId: aws.String(id), TerminationMode: types.TerminationModeTriggerOnProcessTerminate,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := e.waitSession(t, id, types.GameSessionStatusTerminated)
	if got.StatusReason != types.GameSessionStatusReasonTriggeredOnProcessTerminate {
		t.Errorf("terminated game session has reason %q, want TRIGGERED_ON_PROCESS_TERMINATE", got.StatusReason)
	}
	if code := host.waitExit(t); code != 0 {
		t.Errorf("the game server exited with %d after TerminateProcess", code)
	}
	e.waitProcesses(t, 0)
}

// stopWithSignal: a game server stopped with SIGTERM calls ProcessEnding;
// its game session is TERMINATED (no INTERRUPTED reason, no crash event)
// and it exits 0.
func stopWithSignal(t *testing.T, e *env) {
	g := e.launch(t, "chat-4", false)
	e.waitProcesses(t, 1)
	id, err := e.createSession(t, 2)
	if err != nil {
		t.Fatal(err)
	}
	e.waitSession(t, id, types.GameSessionStatusActive)
	if err := g.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.waitExit(t); code != 0 {
		t.Errorf("the game server exited with %d after SIGTERM", code)
	}
	got := e.waitSession(t, id, types.GameSessionStatusTerminated)
	if got.StatusReason != "" {
		t.Errorf("game session ended by ProcessEnding has reason %q", got.StatusReason)
	}
	if p := e.process(t, e.fleet, "chat-4"); p.Status != game.ProcessTerminated {
		t.Errorf("process after ProcessEnding is %s", p.Status)
	}
	for _, ev := range e.events(t) {
		if aws.ToString(ev.ResourceId) == "chat-4" {
			t.Errorf("a clean ProcessEnding wrote the event %s", ev.EventCode)
		}
	}
}
