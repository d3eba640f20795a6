// Package playertest runs the player gateway and the Go client library end
// to end: the real server with its gateway listener, the example chat
// server built and launched as OS processes, players talking HTTP to the
// gateway and TCP to the game server, on every store backend.
package playertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
	"github.com/anylift/anylift/sdk/playerwire"
)

// chatBinary and chatClientBinary are the example game server and game
// client, built once by TestMain.
var chatBinary, chatClientBinary string

func TestMain(m *testing.M) {
	os.Exit(exectest.Main(m, map[string]*string{"examples/chat": &chatBinary, "examples/chatclient": &chatClientBinary}))
}

const (
	location    = "custom-players"
	computeName = "host-1"
	waitLimit   = 20 * time.Second
	grace       = 10 * time.Second
)

// secret signs the players' tokens (HS256).
var secret = []byte("anylift-player-gateway-test-secret-0123456789")

// env is a running Anylift with its player gateway, an Anywhere fleet
// open to players and one registered compute at 127.0.0.1.
type env struct {
	*apitest.Env
	gl      *gamelift.Client
	clock   *testclock.Offset
	fleet   string
	token   string
	players string // the gateway's base URL
}

func start(t *testing.T, opts []apitest.Option) *env {
	t.Helper()
	c := &testclock.Offset{}
	opts = append([]apitest.Option{func(cfg *server.Config) {
		cfg.Now = c.Now
		cfg.PlayerListen = "127.0.0.1:0"
		cfg.Player.Auth.HS256Secret = secret
		cfg.Player.AllowedFleets = []string{"*"}
		cfg.Player.RejoinGrace = grace
		cfg.Player.RatePerSecond = -1
	}}, opts...)
	e := &env{Env: apitest.Start(t, opts...), clock: c}
	e.players = "http://" + e.Server.PlayerAddr()
	e.gl = e.Client()
	e.fleet = apitest.AnywhereFleet(t, e.gl, location, "chat")
	e.token = apitest.RegisterCompute(t, e.gl, e.fleet, location, computeName, "127.0.0.1")
	return e
}

// gameServer is one example chat server running as an OS process.
type gameServer struct{ *exectest.Process }

// launch starts n chat servers and waits until they can host sessions.
func (e *env) launch(t *testing.T, n int) []*gameServer {
	t.Helper()
	var gs []*gameServer
	for i := range n {
		cmd := exec.Command(chatBinary, "-websocketurl", e.Server.SDKEndpoint(), "-authtoken", e.token,
			"-hostid", computeName, "-fleetid", e.fleet, "-processid", fmt.Sprintf("chat-%d", i), "-host", "127.0.0.1", "-port", "0")
		cmd.Env = []string{}
		gs = append(gs, &gameServer{exectest.Start(t, "game server", cmd)})
	}
	e.waitReady(t, n)
	return gs
}

// waitReady waits until n processes are active and have reported health.
func (e *env) waitReady(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d ready server processes", n), func() (bool, string) {
		ready := e.ReadyProcesses(t)
		return ready == n, fmt.Sprintf("%d ready", ready)
	})
}

// waitExit waits for a game server to exit with status 0.
func (g *gameServer) waitExit(t *testing.T) {
	t.Helper()
	if err := g.Wait(t, waitLimit); err != nil {
		t.Fatalf("game server: %v", err)
	}
}

// eventually polls cond until it holds, failing after waitLimit.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	exectest.Eventually(t, what, waitLimit, cond)
}

// tokenFor signs a player token valid for an hour of the server's clock.
func (e *env) tokenFor(t *testing.T, player string) string {
	t.Helper()
	now := e.clock.Now()
	return sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{
		Subject: player, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))})
}

func sign(t *testing.T, m jwt.SigningMethod, key any, c jwt.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// answer is a gateway response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// post calls the gateway with a bearer token ("" for none).
func (e *env) post(t *testing.T, path, token string, body any) answer {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(http.MethodPost, e.players+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// ok decodes a 200 answer into v.
func (a answer) ok(t *testing.T, v any) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatal(err)
	}
}

// failed checks an error answer's status and code and returns it.
func (a answer) failed(t *testing.T, status int, code string) playerwire.Error {
	t.Helper()
	var pe playerwire.Error
	if err := json.Unmarshal(a.body, &pe); err != nil {
		t.Fatalf("error body is not JSON: %q", a.body)
	}
	if a.status != status || pe.Code != code || pe.Message == "" {
		t.Fatalf("got %d %s %q, want %d %s", a.status, pe.Code, pe.Message, status, code)
	}
	if strings.Contains(pe.Message, "sql") || strings.Contains(pe.Message, "goroutine") {
		t.Fatalf("message leaks internals: %q", pe.Message)
	}
	return pe
}

// create creates a session as player through the gateway.
func (e *env) create(t *testing.T, player string, maxPlayers int32) playerwire.Seat {
	t.Helper()
	var seat playerwire.Seat
	e.post(t, playerwire.PathCreate, e.tokenFor(t, player), playerwire.CreateSessionRequest{
		FleetId: e.fleet, MaximumPlayerSessionCount: maxPlayers, Name: "room-" + player,
		GameProperties: []playerwire.Property{{Key: "mode", Value: "chat"}},
	}).ok(t, &seat)
	if seat.GameSessionId == "" || seat.PlayerSessionId == "" || seat.IpAddress != "127.0.0.1" || seat.Port == 0 {
		t.Fatalf("create answered %+v", seat)
	}
	return seat
}

// player is a game client connected to the chat server.
type player struct {
	c  net.Conn
	in *bufio.Reader
}

// connect presents a seat to the chat server and returns its first line.
func connect(t *testing.T, seat playerwire.Seat) (*player, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(seat.IpAddress, fmt.Sprint(seat.Port)), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := &player{c: c, in: bufio.NewReader(c)}
	fmt.Fprintf(c, "%s\n", seat.PlayerSessionId)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	line, err := p.in.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from the game server: %v", err)
	}
	return p, strings.TrimSpace(line)
}

// hangUp half-closes the connection and waits for the server to close
// its side, which it does after RemovePlayerSession.
func (p *player) hangUp(t *testing.T) {
	t.Helper()
	p.c.(*net.TCPConn).CloseWrite()
	p.c.SetReadDeadline(time.Now().Add(waitLimit))
	if _, err := io.Copy(io.Discard, p.in); err != nil {
		t.Fatalf("waiting for the server to hang up: %v", err)
	}
	p.c.Close()
}

func (e *env) playerStatus(t *testing.T, id string) types.PlayerSessionStatus {
	t.Helper()
	out, err := e.gl.DescribePlayerSessions(context.Background(), &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(id)})
	if err != nil || len(out.PlayerSessions) != 1 {
		t.Fatalf("DescribePlayerSessions %s: %v", id, err)
	}
	return out.PlayerSessions[0].Status
}

func (e *env) sessionStatus(t *testing.T, id string) types.GameSessionStatus {
	t.Helper()
	out, err := e.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil || len(out.GameSessions) != 1 {
		t.Fatalf("DescribeGameSessions %s: %v", id, err)
	}
	return out.GameSessions[0].Status
}

func (e *env) waitSession(t *testing.T, id string, want types.GameSessionStatus) {
	t.Helper()
	eventually(t, "game session "+string(want), func() (bool, string) {
		got := e.sessionStatus(t, id)
		return got == want, string(got)
	})
}
