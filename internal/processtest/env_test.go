// Package processtest runs Anylift end to end with real game servers: the
// example chat server (examples/chat) built and launched as OS processes,
// driven through the AWS SDK for Go v2, TCP game clients and raw
// WebSocket connections, on every store backend.
package processtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/testclock"
)

// chatBinary is the example game server, built once by TestMain.
var chatBinary string

func TestMain(m *testing.M) {
	os.Exit(exectest.Main(m, map[string]*string{"examples/chat": &chatBinary}))
}

const (
	location    = "custom-e2e"
	computeName = "host-1"
	lostGrace   = 2 * time.Second
	waitLimit   = 20 * time.Second
)

// env is a running Anylift with an Anywhere fleet and one registered
// compute at 127.0.0.1.
type env struct {
	*apitest.Env
	gl    *gamelift.Client
	clock *testclock.Offset
	fleet string
	token string
}

// start starts Anylift with a TLS listener and a short lost grace, and
// sets up a location, a fleet, a compute and an auth token.
func start(t *testing.T, opts []apitest.Option) *env {
	t.Helper()
	c := &testclock.Offset{}
	opts = append(append([]apitest.Option{}, opts...), func(cfg *server.Config) {
		cfg.TLSListen = "127.0.0.1:0"
		cfg.ProcessLostGrace = lostGrace
		cfg.Now = c.Now
	})
	e := &env{Env: apitest.Start(t, opts...), clock: c}
	e.gl = e.Client()
	e.fleet = apitest.AnywhereFleet(t, e.gl, location, "chat")
	e.token = apitest.RegisterCompute(t, e.gl, e.fleet, location, computeName, "127.0.0.1")
	return e
}

// gameServer is one example chat server running as an OS process.
type gameServer struct {
	*exectest.Process
	pid string // its server process id (pID)
}

// launch starts the example game server as pid with the four values
// GameLift's SDK takes, as flags or (viaEnv) as GAMELIFT_SDK_* variables,
// and kills it at cleanup if it is still running.
func (e *env) launch(t *testing.T, pid string, viaEnv bool) *gameServer {
	t.Helper()
	var cmd *exec.Cmd
	if viaEnv {
		cmd = exec.Command(chatBinary, "-host", "127.0.0.1", "-port", "0")
		cmd.Env = []string{"GAMELIFT_SDK_WEBSOCKET_URL=" + e.Server.SDKEndpoint(), "GAMELIFT_SDK_AUTH_TOKEN=" + e.token,
			"GAMELIFT_SDK_HOST_ID=" + computeName, "GAMELIFT_SDK_FLEET_ID=" + e.fleet, "GAMELIFT_SDK_PROCESS_ID=" + pid}
	} else {
		cmd = exec.Command(chatBinary, "-websocketurl", e.Server.SDKEndpoint(), "-authtoken", e.token,
			"-hostid", computeName, "-fleetid", e.fleet, "-processid", pid, "-host", "127.0.0.1", "-port", "0")
		cmd.Env = []string{} // no GAMELIFT_SDK_* from the test's environment
	}
	return &gameServer{Process: exectest.Start(t, "game server "+pid, cmd), pid: pid}
}

// kill9 kills the game server with SIGKILL and waits for it to be gone.
func (g *gameServer) kill9(t *testing.T) {
	t.Helper()
	if err := g.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.Exited
}

// waitExit waits for the game server to exit and returns its status code.
func (g *gameServer) waitExit(t *testing.T) int {
	t.Helper()
	err := g.Wait(t, waitLimit)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("game server %s: %v", g.pid, err)
	}
	return 0
}

// eventually polls cond until it reports true, failing the test with the
// last description after waitLimit.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	exectest.Eventually(t, what, waitLimit, cond)
}

// gameSession describes one game session.
func (e *env) gameSession(t *testing.T, id string) types.GameSession {
	t.Helper()
	out, err := e.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.GameSessions) != 1 {
		t.Fatalf("DescribeGameSessions %s: %d sessions", id, len(out.GameSessions))
	}
	return out.GameSessions[0]
}

// waitSession waits until the game session has status.
func (e *env) waitSession(t *testing.T, id string, status types.GameSessionStatus) types.GameSession {
	t.Helper()
	var gs types.GameSession
	eventually(t, "game session "+string(status), func() (bool, string) {
		gs = e.gameSession(t, id)
		return gs.Status == status, "status " + string(gs.Status)
	})
	return gs
}

// playerStatus is a player session's status.
func (e *env) playerStatus(t *testing.T, id string) types.PlayerSessionStatus {
	t.Helper()
	out, err := e.gl.DescribePlayerSessions(context.Background(), &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.PlayerSessions) != 1 {
		t.Fatalf("DescribePlayerSessions %s: %d sessions", id, len(out.PlayerSessions))
	}
	return out.PlayerSessions[0].Status
}

func (e *env) waitPlayer(t *testing.T, id string, status types.PlayerSessionStatus) {
	t.Helper()
	eventually(t, "player session "+string(status), func() (bool, string) {
		got := e.playerStatus(t, id)
		return got == status, "status " + string(got)
	})
}

// utilization is the fleet's DescribeFleetUtilization.
func (e *env) utilization(t *testing.T) types.FleetUtilization {
	t.Helper()
	out, err := e.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{e.fleet}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.FleetUtilization) != 1 {
		t.Fatalf("DescribeFleetUtilization: %d entries", len(out.FleetUtilization))
	}
	return out.FleetUtilization[0]
}

// waitProcesses waits until n server processes of the fleet are active
// and have sent their first health report, which makes them eligible for
// game sessions.
func (e *env) waitProcesses(t *testing.T, n int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d active server processes", n), func() (bool, string) {
		got := aws.ToInt32(e.utilization(t).ActiveServerProcessCount)
		reported := e.ReadyProcesses(t)
		return got == n && reported == int(n), fmt.Sprintf("%d active, %d reported health", got, reported)
	})
}

// process reads a server process record from the store.
func (e *env) process(t *testing.T, fleet, pid string) *game.Process {
	t.Helper()
	var p *game.Process
	err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
		var err error
		p, err = tx.GetProcess(fleet, computeName, pid)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// host names the server process hosting a game session.
func (e *env) host(t *testing.T, gameSessionID string) string {
	t.Helper()
	var pid string
	err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
		gs, err := tx.GetGameSession(gameSessionID)
		if err == nil {
			pid = gs.ProcessID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// createSession creates a game session on the fleet.
func (e *env) createSession(t *testing.T, maxPlayers int32) (string, error) {
	t.Helper()
	out, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(maxPlayers),
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.GameSession.GameSessionId), nil
}

func (e *env) reserve(t *testing.T, gameSessionID, player string) string {
	t.Helper()
	out, err := e.gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{
		GameSessionId: aws.String(gameSessionID), PlayerId: aws.String(player),
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.PlayerSession.PlayerSessionId)
}

// events lists the fleet's event codes.
func (e *env) events(t *testing.T) []types.Event {
	t.Helper()
	out, err := e.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(e.fleet)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Events
}
