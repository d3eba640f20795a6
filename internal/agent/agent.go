// Package agent runs game server processes on a compute of an Anywhere
// fleet, as GameLift's agent does: it registers the compute, keeps a
// compute auth token fresh, reads the fleet's runtime configuration and
// keeps that many server processes running with their GAMELIFT_SDK_*
// variables, replaces those that end (at once after a clean end, with
// exponential backoff after a crash), writes
// their output to log files, reports their exits as fleet events, and
// deregisters the compute when it stops.
//
// It talks to the service only through its public APIs: the GameLift API
// with the AWS SDK for Go v2, and Anylift's agent report endpoint
// (api.AgentReportPath) for fleet events.
//
// When the fleet is deleted behind its back the agent stops its processes
// and Run returns ErrFleetGone; when only its compute was deregistered it
// registers it again and carries on.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/localsdk"
)

// ErrFleetGone is returned by Run when the agent's fleet no longer exists.
var ErrFleetGone = errors.New("the fleet no longer exists")

// Config is what an agent needs; zero durations take the defaults below.
type Config struct {
	Endpoint  string // the service's API URL, http://127.0.0.1:9870
	Region    string // us-west-2
	AccessKey string
	SecretKey string

	FleetID     string
	ComputeName string
	Location    string // a custom location of the fleet
	IPAddress   string
	DNSName     string

	LogDir  string // where each process's stdout and stderr go (required)
	WorkDir string // working directory of the processes ("" : the agent's)
	// KeepRegistered leaves the compute registered when the agent stops
	// (anylift dev); by default Run deregisters it.
	KeepRegistered bool
	// LocalSDK is the loopback address ("127.0.0.1:0") of the server SDK
	// over HTTP that the agent serves to each process it launches, holding
	// the process's SDK connection itself (internal/localsdk); "" serves
	// none. The processes find it in ANYLIFT_SDK_HTTP and ANYLIFT_SDK_TOKEN.
	LocalSDK string
	// Wrap, when set, runs the launch paths as game binaries without a
	// server SDK, one game session each (see Wrap).
	Wrap *Wrap

	PollInterval time.Duration // runtime configuration and compute poll (15 s)
	StopTimeout  time.Duration // SIGTERM to SIGKILL (30 s)
	BackoffMin   time.Duration // first delay before a relaunch (1 s)
	BackoffMax   time.Duration // cap of the delays (5 min)
	// StableAfter is how long a process must have run for its slot's
	// backoff to start again from BackoffMin (1 min).
	StableAfter time.Duration
	// ReadyTimeout is how long a process has to call ProcessReady (5 min,
	// GameLift's): then the agent asks the service, which writes
	// SERVER_PROCESS_PROCESS_READY_TIMEOUT (or ..._SDK_INITIALIZATION_TIMEOUT
	// when it never connected), and the agent stops the process.
	ReadyTimeout time.Duration

	HTTPClient *http.Client
	Log        *slog.Logger
	// Now and Wake are the clock: Wake's channel receives once Now has
	// reached at. time.Now and a timer when nil.
	Now  func() time.Time
	Wake func(at time.Time) <-chan time.Time
	// Observe, when set, hears every Event, from the agent's loop.
	Observe func(Event)
}

// Event is something the agent did, for logs and tests.
type Event struct {
	Kind   string // see the Ev* constants
	PID    string // the server process id, when about a process
	Detail string
	OSPID  int           // the operating system's process id, for EvLaunched
	Delay  time.Duration // for EvBackoff
}

// Event kinds.
const (
	EvRegistered   = "registered"
	EvToken        = "token"
	EvConfig       = "config"
	EvLaunched     = "launched"
	EvLaunchFailed = "launch-failed"
	EvExited       = "exited"
	EvStarted      = "started"   // a wrapped game binary started (OSPID) for a game session
	EvActivated    = "activated" // a wrapped game's session is ACTIVE; Delay: the wait for its port
	EvBackoff      = "backoff"   // a slot waits Delay before its next launch
	EvReplacing    = "replacing" // a process ended cleanly: its slot starts another at once
	EvStopping     = "stopping"
	EvReported     = "reported"
	EvServiceError = "service-error"
	EvDeregistered = "deregistered"
)

func (c *Config) defaults() error {
	switch {
	case c.Endpoint == "":
		return errors.New("the service endpoint is required")
	case c.FleetID == "":
		return errors.New("the fleet id is required")
	case c.ComputeName == "":
		return errors.New("the compute name is required")
	case c.Location == "":
		return errors.New("the location is required")
	case c.IPAddress == "":
		return errors.New("the compute's IP address is required")
	case c.LogDir == "":
		return errors.New("the log directory is required")
	case c.AccessKey == "" || c.SecretKey == "":
		return errors.New("credentials are required (an access key id and a secret key)")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.PollInterval, 15*time.Second)
	def(&c.StopTimeout, 30*time.Second)
	def(&c.BackoffMin, time.Second)
	def(&c.BackoffMax, 5*time.Minute)
	def(&c.StableAfter, time.Minute)
	def(&c.ReadyTimeout, 5*time.Minute)
	if c.Region == "" {
		c.Region = "us-west-2"
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.LocalSDK != "" {
		if err := localsdk.CheckAddress(c.LocalSDK); err != nil {
			return err
		}
	}
	if w := c.Wrap; w != nil {
		def(&w.ListenTimeout, time.Minute)
		if w.PortMin < 0 || w.PortMax < w.PortMin || w.PortMax > 60000 || (w.PortMin == 0) != (w.PortMax == 0) {
			return fmt.Errorf("the wrapper's ports %d-%d: want a range within 1-60000", w.PortMin, w.PortMax)
		}
	}
	if c.Wake == nil {
		c.Wake = func(at time.Time) <-chan time.Time { return time.After(time.Until(at)) }
	}
	return nil
}

// Agent is one compute's process supervisor. Its state belongs to the
// goroutine running Run.
type Agent struct {
	cfg   Config
	gl    *gamelift.Client
	creds aws.CredentialsProvider
	log   *slog.Logger

	sdkEndpoint string
	token       string
	tokenExpiry time.Time
	refreshAt   time.Time // when to get the next token
	nextPoll    time.Time
	svcBackoff  backoff // for failing calls to the service
	svcRetryAt  time.Time

	slots   map[string]*slot
	ends    map[string]*ending // exits whose report is not answered yet, by pid
	running int
	exits   chan exit
	notes   chan note // from wrapped processes
	ports   map[int]bool
	reports reportQueue
	fatal   error

	local  *localsdk.Server // nil without Config.LocalSDK
	shared *sdkCreds        // the endpoint and token, for the connections the agent holds
}

// New checks cfg and returns an agent; nothing runs before Run.
func New(cfg Config) (*Agent, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	creds := credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, "")
	a := &Agent{
		cfg:   cfg,
		creds: creds,
		log:   cfg.Log.With("fleet", cfg.FleetID, "compute", cfg.ComputeName),
		gl: gamelift.New(gamelift.Options{
			Region: cfg.Region, BaseEndpoint: aws.String(cfg.Endpoint), Credentials: creds,
			HTTPClient: cfg.HTTPClient, RetryMaxAttempts: 1,
		}),
		svcBackoff: backoff{min: cfg.BackoffMin, max: cfg.BackoffMax},
		slots:      map[string]*slot{},
		ends:       map[string]*ending{},
		exits:      make(chan exit, 16),
		notes:      make(chan note, 16),
		ports:      map[int]bool{},
		shared:     &sdkCreds{},
	}
	return a, nil
}

func (a *Agent) emit(e Event) {
	if a.cfg.Observe != nil {
		a.cfg.Observe(e)
	}
}

// Run registers the compute and supervises processes until ctx ends or
// the fleet disappears. On the way out it stops every process it started
// (SIGTERM, then SIGKILL after StopTimeout), reports their exits and
// deregisters the compute (unless KeepRegistered). It returns nil after a
// cancelled ctx, ErrFleetGone (wrapped) when the fleet was deleted. The
// local SDK, when configured, is served from the start of Run to its end.
func (a *Agent) Run(ctx context.Context) error {
	if a.cfg.LocalSDK != "" {
		l, err := localsdk.Listen(a.cfg.LocalSDK, a.log)
		if err != nil {
			return err
		}
		a.local = l
		defer l.Close()
		a.log.Info("local SDK for game servers", "url", l.URL())
	}
	if err := a.registerUntilDone(ctx); err != nil {
		return err
	}
	err := a.loop(ctx)
	a.shutdown(ctx)
	return err
}

// loop is the supervisor: it does what is due, then waits for a process
// to exit, the next deadline, or ctx.
func (a *Agent) loop(ctx context.Context) error {
	for {
		now := a.cfg.Now()
		a.tick(ctx, now)
		if a.fatal != nil {
			return a.fatal
		}
		wake := a.nextWake(now)
		select {
		case <-ctx.Done():
			return nil
		case ex := <-a.exits:
			a.exited(ctx, ex)
		case n := <-a.notes:
			a.noted(n)
		case <-a.cfg.Wake(wake):
		}
	}
}

// tick does everything due at now.
func (a *Agent) tick(ctx context.Context, now time.Time) {
	if !now.Before(a.svcRetryAt) {
		if !now.Before(a.nextPoll) {
			a.poll(ctx, now)
		}
		if a.fatal == nil && (a.token == "" || !now.Before(a.refreshAt)) {
			a.refreshToken(ctx, now)
		}
	}
	a.killOverdue(now)
	a.checkReady(now)
	a.reports.flush(ctx, a, now) // the answers about exits may make launches due
	if a.token != "" && a.fatal == nil {
		a.launchDue(ctx, now)
	}
	a.reports.flush(ctx, a, now) // launches may have added reports
}

// nextWake is the next deadline after now at which tick has something
// to do. Calls to the service wait for svcRetryAt while it backs off, and
// launches wait for a token, so no deadline already passed is returned
// while nothing can be done about it: the loop never spins.
func (a *Agent) nextWake(now time.Time) time.Time {
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	gated := func(t time.Time) time.Time { // a call to the service at t
		if t.Before(a.svcRetryAt) {
			return a.svcRetryAt
		}
		return t
	}
	earlier(gated(a.nextPoll))
	if a.token == "" {
		earlier(a.svcRetryAt)
	} else {
		earlier(gated(a.refreshAt))
	}
	earlier(a.reports.retryAt)
	for _, s := range a.slots {
		if s.proc == nil && !s.removed && a.token != "" {
			earlier(s.nextStart)
		}
		if p := s.proc; p != nil && p.stopping != "" && !p.killed {
			earlier(p.killAt)
		}
		if p := s.proc; p != nil && p.stopping == "" && !p.readyAsked {
			earlier(p.started.Add(a.cfg.ReadyTimeout))
		}
	}
	if next.IsZero() {
		next = now.Add(a.cfg.PollInterval)
	}
	if next.Before(now.Add(time.Millisecond)) {
		next = now.Add(time.Millisecond)
	}
	return next
}

// serviceFailed backs off calls to the service after err, logging it.
func (a *Agent) serviceFailed(now time.Time, what string, err error) {
	d := a.svcBackoff.next()
	a.svcRetryAt = now.Add(d)
	a.log.Warn("call to the service failed; retrying", "call", what, "retry_in", d.String(), "err", errText(err))
	a.emit(Event{Kind: EvServiceError, Detail: what + ": " + errText(err), Delay: d})
}

func errText(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		var m interface{ ErrorMessage() string }
		if errors.As(err, &m) {
			return ae.ErrorCode() + ": " + m.ErrorMessage()
		}
		return ae.ErrorCode()
	}
	return fmt.Sprint(err)
}

// isNotFound reports whether err is GameLift's NotFoundException.
func isNotFound(err error) bool {
	var ae interface{ ErrorCode() string }
	return errors.As(err, &ae) && ae.ErrorCode() == "NotFoundException"
}
