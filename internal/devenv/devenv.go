// Package devenv is "anylift dev": the service on the embedded store in a
// local data directory, accepting any credentials, with a custom location,
// an Anywhere fleet and a compute on 127.0.0.1 set up (idempotently: a
// restart keeps the same fleet and its data), a compute auth token kept
// fresh, and, on request, game server processes run by the agent.
package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/agent"
	"github.com/anylift/anylift/internal/server"
)

// The names of what dev sets up.
const (
	Location    = "custom-local"
	FleetName   = "anylift-dev"
	ComputeName = "local"
	ComputeIP   = "127.0.0.1"
	// AccessKey and SecretKey are what dev's own clients sign with; the
	// service accepts any.
	AccessKey = "anylift"
	SecretKey = "anylift"

	fleetIDFile = "dev-fleet-id"
	envFile     = "gamelift.env"
)

// Config is what "anylift dev" runs.
type Config struct {
	Server server.Config // AnyCredentials is forced on
	// Launch, when set, is a game server the agent runs Count copies of,
	// with Args.
	Launch string
	Count  int
	Args   []string
	// LocalSDK is the agent's local SDK address ("" : none), and Wrap,
	// when set, runs Launch through the agent's wrapper (agent.Config).
	LocalSDK string
	Wrap     *agent.Wrap
	Out      io.Writer // where the block goes
	Log      *slog.Logger
	// Ready, when set, is called with the Env once the block is printed.
	Ready func(*Env)
	// Agent adjusts the in-process agent's configuration (tests).
	Agent func(*agent.Config)
	// Now and Wake are the token refresher's clock (as in agent.Config);
	// time.Now and a timer when nil.
	Now  func() time.Time
	Wake func(at time.Time) <-chan time.Time
	// Observe, when set, hears the expiry of every refreshed token.
	Observe func(expires time.Time)
	// Status, when set, gets a line saying what the dev fleet runs each
	// time that changes, looked at every StatusEvery (status.go);
	// StatusLooked, when set, hears the line of every look (tests).
	Status       io.Writer
	StatusEvery  time.Duration
	StatusLooked func(line string)
}

// Env is a running dev environment.
type Env struct {
	Server      *server.Server
	FleetID     string
	FleetARN    string
	LocationARN string
	Client      *gamelift.Client
	Elapsed     time.Duration // from Run's start to the printed block

	mu    sync.Mutex
	token string
	exp   time.Time
	got   time.Time // when the token was obtained
}

// Token is the current compute auth token and its expiry.
func (e *Env) Token() (string, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.token, e.exp
}

// Run starts everything, prints the block to cfg.Out and runs until ctx
// ends; then it stops what it started (the agent's processes, the token
// refresher, the service) and returns.
func Run(ctx context.Context, cfg Config) error {
	began := time.Now()
	cfg.defaults()
	if err := os.MkdirAll(cfg.Server.DataDir, 0o755); err != nil {
		return err
	}
	srv, err := server.Start(ctx, cfg.Server)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		srv.Close(sctx)
	}()
	e := &Env{Server: srv, Client: gamelift.New(gamelift.Options{
		Region: regionOf(cfg.Server), BaseEndpoint: aws.String(srv.URL()), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})}
	if err := e.setUp(ctx, cfg); err != nil {
		return err
	}
	return e.run(ctx, cfg, began)
}

func (c *Config) defaults() {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Wake == nil {
		c.Wake = func(at time.Time) <-chan time.Time { return time.After(time.Until(at)) }
	}
	c.Server.AnyCredentials = true
	c.Server.Log = c.Log
	if c.Server.DataDir == "" {
		c.Server.DataDir = "anylift-data"
	}
	// Values printed once keep working for as long as the data directory
	// lives, whatever --auth-token-ttl says; connected servers are still
	// handed fresh tokens, as on GameLift.
	c.Server.AcceptExpiredAuthTokens = true
	c.Server.RefusedProcessHint = fmt.Sprintf("start it with the -websocketurl, -authtoken, -hostid and -fleetid anylift dev printed, "+
		"or with the variables in %s", filepath.Join(c.Server.DataDir, envFile))
}

// run starts the agent (with --launch) and the token refresher, prints
// the block, and waits for ctx or the agent's failure; it returns once
// both goroutines have ended.
func (e *Env) run(ctx context.Context, cfg Config, began time.Time) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	if cfg.Launch != "" {
		a, err := e.agent(cfg)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Run(runCtx); err != nil {
				errc <- fmt.Errorf("agent: %w", err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.keepToken(runCtx, cfg)
	}()
	if cfg.Status != nil && cfg.StatusEvery > 0 {
		start := cfg.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.watchStatus(runCtx, cfg, start)
		}()
	}
	e.Elapsed = time.Since(began)
	printBlock(cfg.Out, e, cfg)
	if cfg.Ready != nil {
		cfg.Ready(e)
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

func regionOf(c server.Config) string {
	if c.Region == "" {
		return "us-west-2"
	}
	return c.Region
}

// setUp creates, or finds again, the location, the fleet and the compute,
// and gets a first token.
func (e *Env) setUp(ctx context.Context, cfg Config) error {
	var err error
	if e.LocationARN, err = e.location(ctx); err != nil {
		return err
	}
	if e.FleetID, e.FleetARN, err = e.fleet(ctx, cfg.Server.DataDir); err != nil {
		return err
	}
	_, err = e.Client.RegisterCompute(ctx, &gamelift.RegisterComputeInput{
		FleetId: aws.String(e.FleetID), ComputeName: aws.String(ComputeName),
		Location: aws.String(Location), IpAddress: aws.String(ComputeIP),
	})
	if err != nil {
		return fmt.Errorf("registering compute %s: %w", ComputeName, err)
	}
	if cfg.Launch != "" {
		if err := e.setLaunch(ctx, cfg); err != nil {
			return err
		}
	}
	return e.refresh(ctx, cfg)
}

// location creates the dev location, or finds it again, and returns its
// ARN.
func (e *Env) location(ctx context.Context) (string, error) {
	out, err := e.Client.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(Location)})
	if err == nil {
		return aws.ToString(out.Location.LocationArn), nil
	}
	var conflict *types.ConflictException
	if !errors.As(err, &conflict) {
		return "", fmt.Errorf("creating location %s: %w", Location, err)
	}
	p := gamelift.NewListLocationsPaginator(e.Client, &gamelift.ListLocationsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("looking up location %s: %w", Location, err)
		}
		for _, l := range page.Locations {
			if aws.ToString(l.LocationName) == Location {
				return aws.ToString(l.LocationArn), nil
			}
		}
	}
	return "", fmt.Errorf("location %s exists but is not listed", Location)
}

// fleet returns the dev fleet's id and ARN: the one whose id is kept in
// the data directory if it still exists, else a new one (whose id is
// then kept).
func (e *Env) fleet(ctx context.Context, dir string) (id, arn string, err error) {
	path := filepath.Join(dir, fleetIDFile)
	if b, err := os.ReadFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		out, err := e.Client.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{id}})
		if err != nil {
			return "", "", fmt.Errorf("looking up fleet %s: %w", id, err)
		}
		if len(out.FleetAttributes) == 1 && out.FleetAttributes[0].Status == types.FleetStatusActive {
			return id, aws.ToString(out.FleetAttributes[0].FleetArn), nil
		}
	}
	out, err := e.Client.CreateFleet(ctx, &gamelift.CreateFleetInput{
		Name: aws.String(FleetName), ComputeType: types.ComputeTypeAnywhere,
		Description: aws.String("Created by anylift dev"),
		Locations:   []types.LocationConfiguration{{Location: aws.String(Location)}},
	})
	if err != nil {
		return "", "", fmt.Errorf("creating the dev fleet: %w", err)
	}
	id = aws.ToString(out.FleetAttributes.FleetId)
	return id, aws.ToString(out.FleetAttributes.FleetArn), os.WriteFile(path, []byte(id+"\n"), 0o644)
}

// setLaunch makes the fleet's runtime configuration run Count copies of
// Launch with Args, for the agent to follow.
func (e *Env) setLaunch(ctx context.Context, cfg Config) error {
	path, err := filepath.Abs(cfg.Launch)
	if err != nil {
		return err
	}
	count := max(cfg.Count, 1)
	sp := types.ServerProcess{LaunchPath: aws.String(path), ConcurrentExecutions: aws.Int32(int32(count))}
	if len(cfg.Args) > 0 {
		sp.Parameters = aws.String(agent.JoinParameters(cfg.Args))
	}
	_, err = e.Client.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{
		FleetId:              aws.String(e.FleetID),
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{sp}},
	})
	if err != nil {
		return fmt.Errorf("setting the runtime configuration: %w", err)
	}
	return nil
}

// agent is the in-process agent on the dev compute; the compute stays
// registered when it stops, for game servers started by hand.
func (e *Env) agent(cfg Config) (*agent.Agent, error) {
	ac := agent.Config{
		Endpoint: e.Server.URL(), Region: regionOf(cfg.Server), AccessKey: AccessKey, SecretKey: SecretKey,
		FleetID: e.FleetID, ComputeName: ComputeName, Location: Location, IPAddress: ComputeIP,
		LogDir: filepath.Join(cfg.Server.DataDir, "logs"), KeepRegistered: true, Log: cfg.Log,
		LocalSDK: cfg.LocalSDK, Wrap: cfg.Wrap,
	}
	if cfg.Agent != nil {
		cfg.Agent(&ac)
	}
	return agent.New(ac)
}
