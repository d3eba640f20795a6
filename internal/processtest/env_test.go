// Package processtest runs Anylift end to end with real game servers: the
// example chat server (examples/chat) built and launched as OS processes,
// driven through the AWS SDK for Go v2, TCP game clients and raw
// WebSocket connections, on every store backend.
package processtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

// chatBinary is the example game server, built once by TestMain.
var chatBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "anylift-processtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	chatBinary = filepath.Join(dir, "chat")
	build := exec.Command("go", "build", "-o", chatBinary, "github.com/anylift/anylift/examples/chat")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building examples/chat:", err)
		return 1
	}
	return m.Run()
}

const (
	location    = "custom-e2e"
	computeName = "host-1"
	lostGrace   = 2 * time.Second
	waitLimit   = 20 * time.Second
)

// clock is the server's clock: real time plus an offset the test moves.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// env is a running Anylift with an Anywhere fleet and one registered
// compute at 127.0.0.1.
type env struct {
	*apitest.Env
	gl    *gamelift.Client
	clock *clock
	fleet string
	token string
}

// start starts Anylift with a TLS listener and a short lost grace, and
// sets up a location, a fleet, a compute and an auth token.
func start(t *testing.T, opts []apitest.Option) *env {
	t.Helper()
	c := &clock{}
	opts = append(append([]apitest.Option{}, opts...), func(cfg *server.Config) {
		cfg.TLSListen = "127.0.0.1:0"
		cfg.ProcessLostGrace = lostGrace
		cfg.Now = c.Now
	})
	e := &env{Env: apitest.Start(t, opts...), clock: c}
	e.gl = e.Client()
	ctx := context.Background()
	if _, err := e.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	e.fleet = e.createFleet(t, "chat")
	e.register(t, e.fleet, computeName)
	e.token = e.authToken(t, e.fleet, computeName)
	return e
}

func (e *env) createFleet(t *testing.T, name string) string {
	t.Helper()
	out, err := e.gl.CreateFleet(context.Background(), &gamelift.CreateFleetInput{
		Name: aws.String(name), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.FleetAttributes.FleetId)
}

func (e *env) register(t *testing.T, fleet, compute string) {
	t.Helper()
	_, err := e.gl.RegisterCompute(context.Background(), &gamelift.RegisterComputeInput{
		FleetId: aws.String(fleet), ComputeName: aws.String(compute),
		Location: aws.String(location), IpAddress: aws.String("127.0.0.1"),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) authToken(t *testing.T, fleet, compute string) string {
	t.Helper()
	out, err := e.gl.GetComputeAuthToken(context.Background(), &gamelift.GetComputeAuthTokenInput{
		FleetId: aws.String(fleet), ComputeName: aws.String(compute),
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.AuthToken)
}

// gameServer is one example chat server running as an OS process.
type gameServer struct {
	pid    string // its server process id (pID)
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{} // closed when it has exited; then err is set
	err    error
}

// launch starts the example game server as pid with the four values
// GameLift's SDK takes, as flags or (viaEnv) as GAMELIFT_SDK_* variables,
// and kills it at cleanup if it is still running.
func (e *env) launch(t *testing.T, pid string, viaEnv bool) *gameServer {
	t.Helper()
	g := &gameServer{pid: pid, out: &syncBuffer{}, exited: make(chan struct{})}
	if viaEnv {
		g.cmd = exec.Command(chatBinary, "-host", "127.0.0.1", "-port", "0")
		g.cmd.Env = []string{"GAMELIFT_SDK_WEBSOCKET_URL=" + e.Server.SDKEndpoint(), "GAMELIFT_SDK_AUTH_TOKEN=" + e.token,
			"GAMELIFT_SDK_HOST_ID=" + computeName, "GAMELIFT_SDK_FLEET_ID=" + e.fleet, "GAMELIFT_SDK_PROCESS_ID=" + pid}
	} else {
		g.cmd = exec.Command(chatBinary, "-websocketurl", e.Server.SDKEndpoint(), "-authtoken", e.token,
			"-hostid", computeName, "-fleetid", e.fleet, "-processid", pid, "-host", "127.0.0.1", "-port", "0")
		g.cmd.Env = []string{} // no GAMELIFT_SDK_* from the test's environment
	}
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		g.err = g.cmd.Wait()
		close(g.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-g.exited:
		default:
			g.cmd.Process.Kill()
			<-g.exited
		}
		if t.Failed() {
			t.Logf("game server %s output:\n%s", pid, g.out.String())
		}
	})
	return g
}

// kill9 kills the game server with SIGKILL and waits for it to be gone.
func (g *gameServer) kill9(t *testing.T) {
	t.Helper()
	if err := g.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.exited
}

// waitExit waits for the game server to exit and returns its status code.
func (g *gameServer) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case <-g.exited:
	case <-time.After(waitLimit):
		t.Fatalf("game server %s did not exit; output:\n%s", g.pid, g.out.String())
	}
	var ee *exec.ExitError
	if errors.As(g.err, &ee) {
		return ee.ExitCode()
	}
	if g.err != nil {
		t.Fatalf("game server %s: %v", g.pid, g.err)
	}
	return 0
}

// syncBuffer collects a process's output safely.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually polls cond until it reports true, failing the test with the
// last description after waitLimit.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, last)
		}
		<-tick.C
	}
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
		reported := 0
		err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
			list, _, err := tx.ListProcesses("", game.ProcessActive, store.Page{Limit: 1000})
			for _, p := range list {
				if p.Healthy || p.GameSessionID != "" {
					reported++
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
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
