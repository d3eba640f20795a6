package devenv_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/devenv"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
	sdk "github.com/anylift/anylift/sdk/server"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const waitLimit = 30 * time.Second

// dev is one run of devenv.Run in the background.
type dev struct {
	env  *devenv.Env
	out  *bytes.Buffer
	stop context.CancelFunc
	done chan error
}

// startDev runs dev on dataDir until the test stops it (or cleanup).
func startDev(t testing.TB, dataDir string, adjust func(*devenv.Config)) *dev {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &dev{out: &bytes.Buffer{}, stop: cancel, done: make(chan error, 1)}
	ready := make(chan *devenv.Env, 1)
	cfg := devenv.Config{
		Server: server.Config{Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0", DataDir: dataDir},
		Out:    d.out,
		Ready:  func(e *devenv.Env) { ready <- e },
	}
	if adjust != nil {
		adjust(&cfg)
	}
	go func() { d.done <- devenv.Run(ctx, cfg) }()
	select {
	case d.env = <-ready:
	case err := <-d.done:
		t.Fatalf("dev stopped before it was ready: %v", err)
	case <-time.After(waitLimit):
		t.Fatal("dev did not become ready")
	}
	t.Cleanup(func() { d.close(t) })
	return d
}

// close stops dev and waits for Run to return.
func (d *dev) close(t testing.TB) {
	t.Helper()
	d.stop()
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("dev returned %v", err)
		}
		d.done <- nil
	case <-time.After(waitLimit):
		t.Fatal("dev did not stop")
	}
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`fleet-[0-9a-f-]{36}`), "fleet-ID"},
	{regexp.MustCompile(`(-authtoken |GAMELIFT_SDK_AUTH_TOKEN=)[A-Za-z0-9_-]+`), "${1}TOKEN"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(`ready in [0-9.]+[µm]?s`), "ready in Xms"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`), "TIME"},
}

func normalize(s, dataDir string) string {
	s = bytes.NewBufferString(s).String()
	s = regexp.MustCompile(regexp.QuoteMeta(dataDir)).ReplaceAllString(s, "DATA")
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestDevIsIdempotentAcrossRestarts: a second run on the same data
// directory finds the same fleet, compute and data, and prints the same
// block (golden, ids normalised); the variables file holds the current
// token.
func TestDevIsIdempotentAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	first := startDev(t, dir, nil)
	checkGolden(t, "block.golden", normalize(first.out.String(), dir))
	fleet := first.env.FleetID
	ctx := context.Background()
	_, err := first.env.Client.CreateAlias(ctx, &gamelift.CreateAliasInput{
		Name:            aws.String("dev-alias"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fleet)},
	})
	if err != nil {
		t.Fatal(err)
	}
	first.close(t)

	second := startDev(t, dir, nil)
	if second.env.FleetID != fleet {
		t.Fatalf("fleet after restart %s, want %s", second.env.FleetID, fleet)
	}
	checkGolden(t, "block.golden", normalize(second.out.String(), dir))
	gl := second.env.Client
	aliases, err := gl.ListAliases(ctx, &gamelift.ListAliasesInput{Name: aws.String("dev-alias")})
	if err != nil || len(aliases.Aliases) != 1 {
		t.Fatalf("alias after restart: %v %v", aliases, err)
	}
	fleets, err := gl.ListFleets(ctx, &gamelift.ListFleetsInput{})
	if err != nil || len(fleets.FleetIds) != 1 {
		t.Fatalf("fleets after restart: %v %v", fleets, err)
	}
	if _, err := gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(devenv.ComputeName)}); err != nil {
		t.Fatal(err)
	}
	vars, err := os.ReadFile(filepath.Join(dir, "gamelift.env"))
	tok, _ := second.env.Token()
	if err != nil || !bytes.Contains(vars, []byte("export GAMELIFT_SDK_AUTH_TOKEN="+tok+"\n")) {
		t.Fatalf("gamelift.env: %q %v", vars, err)
	}
}

// TestDevLaunch: "anylift dev --launch chat --count 2 -- -port 0" runs two
// example chat servers through the agent; a game session is created on
// the fleet, a player joins it over TCP, and its player session is ACTIVE.
func TestDevLaunch(t *testing.T) {
	chat := filepath.Join(t.TempDir(), "chat")
	build := exec.Command("go", "build", "-o", chat, "github.com/anylift/anylift/examples/chat")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building examples/chat: %v", err)
	}
	d := startDev(t, t.TempDir(), func(c *devenv.Config) {
		c.Launch, c.Count, c.Args = chat, 2, []string{"-port", "0"}
	})
	gl, fleet, ctx := d.env.Client, d.env.FleetID, context.Background()
	waitFor(t, "2 active server processes", func() bool {
		out, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
		return err == nil && aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount) == 2
	})
	gs, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), Location: aws.String(devenv.Location), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	id := gs.GameSession.GameSessionId
	var session types.GameSession
	waitFor(t, "the game session to be ACTIVE", func() bool {
		out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		if err != nil || len(out.GameSessions) != 1 {
			return false
		}
		session = out.GameSessions[0]
		return session.Status == types.GameSessionStatusActive
	})
	ps, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: id, PlayerId: aws.String("player-1")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", net.JoinHostPort(aws.ToString(session.IpAddress), strconv.Itoa(int(aws.ToInt32(session.Port)))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintln(c, aws.ToString(ps.PlayerSession.PlayerSessionId))
	c.SetReadDeadline(time.Now().Add(waitLimit))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "OK\n" {
		t.Fatalf("joining: %q %v", line, err)
	}
	out, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: ps.PlayerSession.PlayerSessionId})
	if err != nil || out.PlayerSessions[0].Status != types.PlayerSessionStatusActive {
		t.Fatalf("player session: %+v %v", out, err)
	}
}

// waitFor polls the service's state until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		<-tick.C
	}
}

// BenchmarkDevReady measures how long "anylift dev" takes to print its
// block, on a fresh data directory and on one it already set up.
func BenchmarkDevReady(b *testing.B) {
	for _, fresh := range []bool{true, false} {
		b.Run(map[bool]string{true: "fresh", false: "restart"}[fresh], func(b *testing.B) {
			dir := b.TempDir()
			if !fresh {
				startDev(b, dir, nil).close(b)
			}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				run := dir
				if fresh {
					run = b.TempDir()
				}
				d := startDev(b, run, nil)
				total += d.env.Elapsed
				d.close(b)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/ready")
		})
	}
}

// TestDevKeepsTokenFresh: halfway through the token's life dev gets a new
// one, before the old one expires, and rewrites gamelift.env with it.
func TestDevKeepsTokenFresh(t *testing.T) {
	c := &testclock.Offset{}
	refreshed := make(chan time.Time, 4)
	dir := t.TempDir()
	d := startDev(t, dir, func(cfg *devenv.Config) {
		cfg.Server.Now, cfg.Server.AuthTokenTTL = c.Now, 10*time.Minute
		cfg.Now, cfg.Wake = c.Now, c.Wake
		cfg.Observe = func(exp time.Time) { refreshed <- exp }
	})
	old, oldExp := d.env.Token()
	c.Advance(5*time.Minute + time.Second)
	select {
	case <-refreshed:
	case <-time.After(waitLimit):
		t.Fatal("no refresh halfway through the token's life")
	}
	tok, exp := d.env.Token()
	if tok == old || !exp.After(oldExp) || !c.Now().Before(oldExp) {
		t.Fatalf("token %q exp %v after refresh (old %q exp %v, now %v)", tok, exp, old, oldExp, c.Now())
	}
	vars, err := os.ReadFile(filepath.Join(dir, "gamelift.env"))
	if err != nil || !bytes.Contains(vars, []byte("GAMELIFT_SDK_AUTH_TOKEN="+tok+"\n")) {
		t.Fatalf("gamelift.env: %q %v", vars, err)
	}
}

// TestDevPrintedValuesOutliveTheToken: a game server started with the
// values dev printed, after that token's expiry, connects; one started
// with a token dev never minted is refused, and dev's log says so at
// WARN with what to do.
func TestDevPrintedValuesOutliveTheToken(t *testing.T) {
	c := &testclock.Offset{}
	logs := &exectest.LogRecords{}
	d := startDev(t, t.TempDir(), func(cfg *devenv.Config) {
		cfg.Server.Now, cfg.Server.AuthTokenTTL = c.Now, 10*time.Minute
		cfg.Now, cfg.Wake = c.Now, c.Wake
		cfg.Log = slog.New(logs)
	})
	printed, exp := d.env.Token()
	c.Advance(11 * time.Minute)
	if !c.Now().After(exp) {
		t.Fatalf("now %v, token expires %v", c.Now(), exp)
	}
	connect := func(pid, token string) error {
		p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: d.env.Server.SDKEndpoint(), ProcessID: pid, HostID: devenv.ComputeName,
			FleetID: d.env.FleetID, AuthToken: token}, sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {},
			ConnectAttempts: 1, HealthCheckInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			p.Destroy()
		}
		return err
	}
	if err := connect("late-server", printed); err != nil {
		t.Fatalf("the printed token, after its expiry: %v", err)
	}
	if err := connect("wrong-token", "not-a-token-dev-minted"); err == nil {
		t.Fatal("a token dev never minted was accepted")
	}
	want := map[string]string{"level": "WARN", "process": "wrong-token",
		"msg": "a game server was refused: the auth token is not valid for this fleet and compute"}
	if !logs.Has(want) {
		t.Fatalf("no warning %v", want)
	}
}

// TestDevStatusLine: dev prints one line when what its fleet runs
// changes (a server ready, a game session with a player, a fault), and
// nothing at a look that finds it unchanged.
func TestDevStatusLine(t *testing.T) {
	c := &testclock.Offset{}
	out := &exectest.SyncBuffer{}
	looked := make(chan string, 1)
	d := startDev(t, t.TempDir(), func(cfg *devenv.Config) {
		cfg.Server.Now, cfg.Now, cfg.Wake = c.Now, c.Now, c.Wake
		cfg.Status, cfg.StatusEvery = out, 2*time.Second
		cfg.Server.AllowFaultInjection = true // as anylift dev sets it
		cfg.StatusLooked = func(line string) { looked <- line }
	})
	look := func(want string) {
		t.Helper()
		c.Advance(2 * time.Second)
		select {
		case got := <-looked:
			if got != want {
				t.Fatalf("status %q, want %q", got, want)
			}
		case <-time.After(waitLimit):
			t.Fatal("dev did not look at its status")
		}
	}
	look("status: 0 server processes, 0 game sessions, 0 players")

	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: d.env.Server.SDKEndpoint(), ProcessID: "game-1", HostID: devenv.ComputeName,
		FleetID: d.env.FleetID, AuthToken: mustToken(d)}, sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {},
		ConnectAttempts: 1, HealthCheckInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	started := make(chan sdk.GameSession, 1)
	if err := p.ProcessReady(sdk.ProcessParameters{Port: 7777, OnStartGameSession: func(gs sdk.GameSession) { started <- gs },
		OnProcessTerminate: func() {}}); err != nil {
		t.Fatal(err)
	}
	look("status: 1 server process (1 ready), 0 game sessions, 0 players")
	look("status: 1 server process (1 ready), 0 game sessions, 0 players")

	ctx := context.Background()
	gs, err := d.env.Client.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(d.env.FleetID),
		Location: aws.String(devenv.Location), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(waitLimit):
		t.Fatal("no OnStartGameSession")
	}
	if err := p.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.env.Client.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: gs.GameSession.GameSessionId,
		PlayerId: aws.String("player-1")}); err != nil {
		t.Fatal(err)
	}
	look("status: 1 server process (1 ready, 1 hosting), 1 game session (1 ACTIVE), 1 player")
	if _, err := d.env.Server.Service().InjectFault(ctx, &extapi.InjectFaultInput{Fault: extapi.Fault{Kind: "PLACEMENT_FAILURE",
		FleetId: d.env.FleetID, Count: 1}}); err != nil {
		t.Fatalf("dev takes faults: %v", err)
	}
	look("status: 1 server process (1 ready, 1 hosting), 1 game session (1 ACTIVE), 1 player, 1 fault in force (anylift fault list)")

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{"status: 1 server process (1 ready), 0 game sessions, 0 players",
		"status: 1 server process (1 ready, 1 hosting), 1 game session (1 ACTIVE), 1 player",
		"status: 1 server process (1 ready, 1 hosting), 1 game session (1 ACTIVE), 1 player, 1 fault in force (anylift fault list)"}
	if len(lines) != len(want) {
		t.Fatalf("printed:\n%s", out.String())
	}
	for i, l := range lines {
		clock, rest, _ := strings.Cut(l, " ")
		if _, err := time.Parse("15:04:05", clock); err != nil || rest != want[i] {
			t.Errorf("line %d %q, want the time and %q", i+1, l, want[i])
		}
	}
}

func mustToken(d *dev) string {
	tok, _ := d.env.Token()
	return tok
}
