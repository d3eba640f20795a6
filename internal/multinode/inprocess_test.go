package multinode

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/storetestenv"
	sdk "github.com/anylift/anylift/sdk/server"
)

func schema(t *testing.T) string {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	return storetestenv.FreshSchema(t, dsn)
}

// A node whose database has gone (here: its schema was dropped) answers
// 503 on /healthz and refuses API calls with 503 rather than answering;
// /livez still answers 200.
func TestNodeWithoutItsDatabaseRefusesTraffic(t *testing.T) {
	dsn := schema(t)
	env := apitest.Start(t, apitest.WithPostgres(dsn))
	if r := env.CallJSON(t, "ListFleets", map[string]any{}); r.Status != http.StatusOK {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	u, _ := url.Parse(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The node's background loops keep writing meanwhile; a DROP that
	// deadlocks with one of them is tried again.
	for attempt := 1; ; attempt++ {
		_, err := db.Exec("DROP SCHEMA " + u.Query().Get("search_path") + " CASCADE")
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(err.Error(), "40P01") {
			t.Fatal(err)
		}
	}
	resp, err := http.Get(env.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/healthz: %d %s", resp.StatusCode, body)
	}
	env.Server.Service().Sweep(context.Background()) // the heartbeat fails
	if resp, err := http.Get(env.URL + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz after a failed heartbeat: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Alive all the same: a liveness probe does not restart it.
	if resp, err := http.Get(env.URL + "/livez"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/livez without a database: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	r := env.CallJSON(t, "ListFleets", map[string]any{})
	if r.Status != http.StatusServiceUnavailable || r.ErrorType(t) != "InternalServiceException" || r.Header.Get("Retry-After") == "" {
		t.Errorf("API call without a database: %d %s", r.Status, r.Body)
	}
	// The AWS SDK (CBOR) reads the 503 as the typed exception, not as
	// a deserialization failure.
	_, err = env.Client().ListFleets(context.Background(), &gamelift.ListFleetsInput{})
	var ise *types.InternalServiceException
	if !errors.As(err, &ise) || !strings.Contains(ise.ErrorMessage(), "cannot reach its database") {
		t.Errorf("the SDK saw %T %v", err, err)
	}
	t.Logf("refused with: %s", r.Body)
}

// Two nodes whose clocks are 5 s ahead and 5 s behind: a session created
// through one reaches a process connected to the other, and neither takes
// the other for dead.
func TestTwoNodesWithSkewedClocks(t *testing.T) {
	dsn := schema(t)
	node := func(skew time.Duration) *apitest.Env {
		return apitest.Start(t, apitest.WithPostgres(dsn), func(c *server.Config) {
			c.Now = func() time.Time { return time.Now().Add(skew) }
			c.NodeListen, c.NodeSecret = "127.0.0.1:0", nodeSecret
			c.NodeTTL = 3 * time.Second
		})
	}
	a, b := node(5*time.Second), node(-5*time.Second)
	ctx := context.Background()
	gl := b.Client()
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("skew"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := f.FleetAttributes.FleetId
	if _, err := gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: fleet, ComputeName: aws.String("h1"),
		Location: aws.String(location), IpAddress: aws.String("10.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	tok, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: fleet, ComputeName: aws.String("h1")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: a.Server.SDKEndpoint(), ProcessID: "p1", HostID: "h1",
		FleetID: *fleet, AuthToken: *tok.AuthToken}, sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {},
		HealthCheckInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	started := make(chan string, 2)
	if err := p.ProcessReady(sdk.ProcessParameters{Port: 9000, OnStartGameSession: func(gs sdk.GameSession) { started <- gs.GameSessionID }}); err != nil {
		t.Fatal(err)
	}
	// Both nodes sweep (heartbeats, orphans, process timers) with their
	// own clocks; the process stays connected.
	a.Server.Service().Sweep(ctx)
	b.Server.Service().Sweep(ctx)
	var gs *gamelift.CreateGameSessionOutput
	deadline := time.Now().Add(10 * time.Second)
	for {
		gs, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: fleet, Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2)})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // until the first heartbeat makes the process free
	}
	if err != nil {
		t.Fatalf("CreateGameSession through the other node: %v", err)
	}
	select {
	case id := <-started:
		if id != *gs.GameSession.GameSessionId {
			t.Errorf("started %s, created %s", id, *gs.GameSession.GameSessionId)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarded CreateGameSession never reached the process")
	}
	if err := p.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
	a.Server.Service().Sweep(ctx)
	b.Server.Service().Sweep(ctx)
	out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
	if err != nil || out.GameSessions[0].Status != types.GameSessionStatusActive {
		t.Fatalf("session after sweeps on skewed nodes: %v %v", out, err)
	}
}
