package multinode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	sdk "github.com/anylift/anylift/sdk/server"
)

const location = "custom-lab"

// client is the AWS SDK for Go v2 GameLift client through the balancer;
// it retries what a killed node left unanswered (a 502 from nginx).
func (c *cluster) client() *gamelift.Client {
	return gamelift.New(gamelift.Options{Region: apitest.Region, BaseEndpoint: aws.String(c.lbURL),
		Credentials:      credentials.NewStaticCredentialsProvider(apitest.AccessKey, apitest.SecretKey, ""),
		RetryMaxAttempts: 5})
}

// game is the test's fleet: game server processes built with the Go SDK,
// connected through the balancer, activating every session they get.
type game struct {
	t     *testing.T
	gl    *gamelift.Client
	fleet string
	mu    sync.Mutex
	hosts map[string][]string // game session id → processes that started it
}

func newGame(t *testing.T, c *cluster, computes, perCompute int) *game {
	t.Helper()
	ctx := context.Background()
	g := &game{t: t, gl: c.client(), hosts: map[string][]string{}}
	if _, err := g.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	f, err := g.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("lab"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}}})
	if err != nil {
		t.Fatal(err)
	}
	g.fleet = aws.ToString(f.FleetAttributes.FleetId)
	if _, err := g.gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("q"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(g.fleet)}}}); err != nil {
		t.Fatal(err)
	}
	for i := range computes {
		name := fmt.Sprintf("host-%d", i)
		if _, err := g.gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(g.fleet), ComputeName: aws.String(name),
			Location: aws.String(location), IpAddress: aws.String(fmt.Sprintf("10.0.0.%d", i+1))}); err != nil {
			t.Fatal(err)
		}
		tok, err := g.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(g.fleet), ComputeName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		for j := range perCompute {
			g.process(c, name, fmt.Sprintf("p-%d-%d", i, j), aws.ToString(tok.AuthToken))
		}
	}
	return g
}

func (g *game) process(c *cluster, compute, pid, token string) {
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: "ws" + c.lbURL[len("http"):], ProcessID: pid, HostID: compute,
		FleetID: g.fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {},
		HealthCheckInterval: 2 * time.Second, HealthCheckJitter: time.Millisecond,
		ReconnectMin: 50 * time.Millisecond, ReconnectMax: 500 * time.Millisecond, DrainTimeout: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { p.Destroy() })
	err = p.ProcessReady(sdk.ProcessParameters{Port: 9000,
		OnStartGameSession: func(gs sdk.GameSession) {
			g.mu.Lock()
			g.hosts[gs.GameSessionID] = append(g.hosts[gs.GameSessionID], pid)
			g.mu.Unlock()
			go p.ActivateGameSession()
		},
		OnProcessTerminate: func() {},
	})
	if err != nil {
		g.t.Fatal(err)
	}
}

// placed is an acknowledged placement and what was made on it.
type placed struct {
	id, session, player string
}

// place starts a placement and waits until it is FULFILLED, then reserves
// a player session in it. Errors are returned, not fatal: the caller
// decides what a failure during a node's loss means.
func (g *game) place(ctx context.Context, id string) (placed, error) {
	if _, err := g.gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(id),
		GameSessionQueueName: aws.String("q"), MaximumPlayerSessionCount: aws.Int32(4)}); err != nil {
		return placed{}, fmt.Errorf("start %s: %w", id, err)
	}
	for {
		out, err := g.gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
		if err != nil {
			return placed{}, fmt.Errorf("describe %s: %w", id, err)
		}
		if st := out.GameSessionPlacement.Status; st == types.GameSessionPlacementStateFulfilled {
			ps, err := g.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: out.GameSessionPlacement.GameSessionArn,
				PlayerId: aws.String("player-" + id)})
			if err != nil {
				return placed{}, fmt.Errorf("player in %s: %w", id, err)
			}
			return placed{id, aws.ToString(out.GameSessionPlacement.GameSessionArn), aws.ToString(ps.PlayerSession.PlayerSessionId)}, nil
		} else if st != types.GameSessionPlacementStatePending {
			return placed{}, fmt.Errorf("placement %s ended %s", id, st)
		}
		select {
		case <-ctx.Done():
			return placed{}, fmt.Errorf("placement %s: %w", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// placeMany runs n placements at once and returns those acknowledged.
func (g *game) placeMany(ctx context.Context, prefix string, n int) ([]placed, []error) {
	var mu sync.Mutex
	var ok []placed
	var errs []error
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := g.place(ctx, fmt.Sprintf("%s-%d", prefix, i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ok = append(ok, p)
		}()
	}
	wg.Wait()
	return ok, errs
}

func TestNginxThreeNodesSurviveKilledAndDrainedNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nginx and three anylift binaries")
	}
	// The shared mode, asked for: every node reads and writes the fleet;
	// its processes come back as soon as their SDKs reconnect.
	t.Run("shared", func(t *testing.T) { surviveKilledAndDrained(t, []string{"--fleet-ownership=false"}, 5*time.Second) })
	// The default: the fleet is owned by one node. When it is killed, its
	// processes come back once another node has taken the fleet over (the
	// node TTL, 3 s, and a tick).
	t.Run("owned", func(t *testing.T) { surviveKilledAndDrained(t, nil, 10*time.Second) })
}

func surviveKilledAndDrained(t *testing.T, extra []string, reconnectWithin time.Duration) {
	c := prepareCluster(t)
	c.extra = extra
	c.start(3, c.bin)
	const procs = 24
	g := newGame(t, c, 3, procs/3)
	c.waitFor("every process ready", 15*time.Second, func() bool {
		return c.count(`SELECT COUNT(*) FROM processes WHERE status = 'ACTIVE' AND connected = 1 AND healthy = 1`) == procs
	})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	acked, errs := g.placeMany(ctx, "before", 6)
	if len(errs) > 0 {
		g.mu.Lock()
		t.Logf("started: %v", g.hosts)
		g.mu.Unlock()
		t.Fatalf("placements before the kill: %v", errs)
	}

	// Kill the node holding the most processes, with placements and
	// searches running through the balancer.
	held := c.heldBy()
	victim := c.nodes[0]
	for _, n := range c.nodes {
		if held[n.internal] > held[victim.internal] {
			victim = n
		}
	}
	t.Logf("processes per node before the kill: %v; killing %s", held, victim.internal)
	during := make(chan []placed, 1)
	duringErrs := make(chan []error, 1)
	searches := make(chan error, 1)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	go func() {
		ok, errs := g.placeMany(ctx, "during", 8)
		during <- ok
		duringErrs <- errs
	}()
	go func() {
		var err error
		for range 20 {
			if _, err = g.gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String(g.fleet),
				FilterExpression: aws.String("hasAvailablePlayerSessions=true")}); err != nil {
				break
			}
		}
		searches <- err
	}()
	took := c.waitFor("the killed node's processes to reconnect", reconnectWithin, func() bool {
		h := c.heldBy()
		total := 0
		for _, n := range h {
			total += n
		}
		return h[victim.internal] == 0 && total == procs
	})
	t.Logf("reconnected %v after the kill (observed %v)", took, time.Since(killed))
	<-victim.done

	acked = append(acked, <-during...)
	if errs := <-duringErrs; len(errs) > 0 {
		t.Errorf("placements during the kill: %v", errs)
	}
	if err := <-searches; err != nil {
		t.Errorf("searches during the kill: %v", err)
	}

	// Drain a surviving node with SIGTERM: its processes move to the last
	// one through RefreshConnection, and it exits cleanly.
	var drained, last *node
	for _, n := range c.nodes {
		if n != victim && drained == nil {
			drained = n
		} else if n != victim {
			last = n
		}
	}
	if owner := c.owner(g.fleet); owner == last {
		// With ownership, drain the fleet's owner: it hands the fleet
		// over before its processes move.
		drained, last = last, drained
	}
	if err := drained.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the drained node's processes to move", 15*time.Second, func() bool {
		return c.heldBy()[last.internal] == procs
	})
	<-drained.done
	if drained.err != nil {
		t.Errorf("drained node exited: %v", drained.err)
	}
	after, errs := g.placeMany(ctx, "after", 4)
	if len(errs) > 0 {
		t.Errorf("placements after the drain: %v", errs)
	}
	acked = append(acked, after...)
	g.check(t, c, acked)
}

// check: every acknowledged game session and player session is there, no
// session was started on two processes, and no process hosts two.
func (g *game) check(t *testing.T, c *cluster, acked []placed) {
	ctx := context.Background()
	seen := map[string]bool{}
	for _, p := range acked {
		if seen[p.session] {
			t.Errorf("session %s placed twice", p.session)
		}
		seen[p.session] = true
		out, err := g.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(p.session)})
		if err != nil || len(out.GameSessions) != 1 || out.GameSessions[0].Status != types.GameSessionStatusActive {
			t.Errorf("acknowledged session %s: %v %v", p.session, out, err)
		}
		ps, err := g.gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(p.player)})
		if err != nil || len(ps.PlayerSessions) != 1 {
			t.Errorf("acknowledged player session %s: %v", p.player, err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, hosts := range g.hosts {
		distinct := map[string]bool{}
		for _, h := range hosts {
			distinct[h] = true
		}
		if len(distinct) != 1 {
			t.Errorf("session %s started on processes %v", id, hosts)
		}
	}
	if n := c.count(`SELECT COUNT(*) FROM (SELECT game_session_id FROM processes WHERE game_session_id <> ''
		GROUP BY game_session_id HAVING COUNT(*) > 1) d`); n != 0 {
		t.Errorf("%d sessions on two processes", n)
	}
	if n := c.count(`SELECT COUNT(*) FROM processes WHERE game_session_id <> ''`); n != len(acked) {
		t.Errorf("%d processes host a session, %d placements acknowledged", n, len(acked))
	}
}
