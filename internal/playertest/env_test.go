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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/sdk/playerwire"
)

// chatBinary and chatClientBinary are the example game server and game
// client, built once by TestMain.
var chatBinary, chatClientBinary string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "anylift-playertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	chatBinary, chatClientBinary = filepath.Join(dir, "chat"), filepath.Join(dir, "chatclient")
	for bin, pkg := range map[string]string{chatBinary: "examples/chat", chatClientBinary: "examples/chatclient"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/anylift/anylift/"+pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg+":", err)
			return 1
		}
	}
	return m.Run()
}

const (
	location    = "custom-players"
	computeName = "host-1"
	waitLimit   = 20 * time.Second
	grace       = 10 * time.Second
)

// secret signs the players' tokens (HS256).
var secret = []byte("anylift-player-gateway-test-secret-0123456789")

// clock is the server's clock: real time plus an offset the test moves.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.offset) }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.offset += d }

// env is a running Anylift with its player gateway, an Anywhere fleet
// open to players and one registered compute at 127.0.0.1.
type env struct {
	*apitest.Env
	gl      *gamelift.Client
	clock   *clock
	fleet   string
	token   string
	players string // the gateway's base URL
}

func start(t *testing.T, opts []apitest.Option) *env {
	t.Helper()
	c := &clock{}
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
	ctx := context.Background()
	if _, err := e.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	out, err := e.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{
		Name: aws.String("chat"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.fleet = aws.ToString(out.FleetAttributes.FleetId)
	_, err = e.gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{
		FleetId: aws.String(e.fleet), ComputeName: aws.String(computeName),
		Location: aws.String(location), IpAddress: aws.String("127.0.0.1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(computeName)})
	if err != nil {
		t.Fatal(err)
	}
	e.token = aws.ToString(tok.AuthToken)
	return e
}

// gameServer is one example chat server running as an OS process.
type gameServer struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error
}

// launch starts n chat servers and waits until they can host sessions.
func (e *env) launch(t *testing.T, n int) []*gameServer {
	t.Helper()
	var gs []*gameServer
	for i := range n {
		g := &gameServer{out: &syncBuffer{}, exited: make(chan struct{})}
		g.cmd = exec.Command(chatBinary, "-websocketurl", e.Server.SDKEndpoint(), "-authtoken", e.token,
			"-hostid", computeName, "-fleetid", e.fleet, "-processid", fmt.Sprintf("chat-%d", i), "-host", "127.0.0.1", "-port", "0")
		g.cmd.Env = []string{}
		g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
		if err := g.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { g.err = g.cmd.Wait(); close(g.exited) }()
		t.Cleanup(func() {
			select {
			case <-g.exited:
			default:
				g.cmd.Process.Kill()
				<-g.exited
			}
			if t.Failed() {
				t.Logf("game server output:\n%s", g.out.String())
			}
		})
		gs = append(gs, g)
	}
	e.waitReady(t, n)
	return gs
}

// waitReady waits until n processes are active and have reported health.
func (e *env) waitReady(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d ready server processes", n), func() (bool, string) {
		ready := 0
		err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
			list, _, err := tx.ListProcesses("", game.ProcessActive, store.Page{Limit: 1000})
			for _, p := range list {
				if p.Healthy || p.GameSessionID != "" {
					ready++
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ready == n, fmt.Sprintf("%d ready", ready)
	})
}

// waitExit waits for a game server to exit with status 0.
func (g *gameServer) waitExit(t *testing.T) {
	t.Helper()
	select {
	case <-g.exited:
	case <-time.After(waitLimit):
		t.Fatalf("game server did not exit; output:\n%s", g.out.String())
	}
	if g.err != nil {
		t.Fatalf("game server: %v", g.err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// eventually polls cond until it holds, failing after waitLimit.
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
