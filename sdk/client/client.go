// Package client is Anylift's Go client library for game clients and game
// backends: the session interface of configure, create a session (on a
// fleet or alias, or on a queue), search sessions, join and leave, each
// blocking (with a context) or asynchronous (the result goes to a
// notification handler the game registers).
//
// Two transports: the player gateway with a player token (game clients,
// no AWS credentials), and the control-plane API with AWS credentials
// (backends; it also works against Amazon GameLift itself).
package client

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Config configures a client. Exactly one of PlayerToken, DevPlayerID and
// Credentials chooses the transport.
type Config struct {
	// Region is an AWS-style region name such as us-east-1.
	Region string
	// Endpoint is the base URL: the player gateway's (http://host:9872)
	// or the control plane's (http://host:9870; empty means AWS's).
	Endpoint string

	// PlayerToken returns the player's signed token for the gateway.
	PlayerToken func(ctx context.Context) (string, error)
	// DevPlayerID names the player to a gateway in dev mode.
	DevPlayerID string
	// Credentials sign control-plane calls (SigV4).
	Credentials aws.CredentialsProvider
	// PlayerID is the player a control-plane client acts for by default.
	PlayerID string

	// HTTPClient makes the calls; http.DefaultClient's transport when nil.
	HTTPClient *http.Client
	// CreateTimeout bounds a control-plane create's wait for ACTIVE or
	// FULFILLED (30 s); the gateway applies its own bound.
	CreateTimeout time.Duration

	Hooks         Hooks
	Notifications Notifications
}

// regionPattern is what an AWS region name looks like: us-east-1,
// ap-southeast-2, us-gov-west-1.
var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// transport is one way to reach the service.
type transport interface {
	create(ctx context.Context, r CreateSessionRequest) (Seat, error)
	createOnQueue(ctx context.Context, r CreateSessionOnQueueRequest) (Seat, error)
	search(ctx context.Context, r SearchSessionsRequest) (SearchSessionsResult, error)
	reserve(ctx context.Context, r JoinSessionRequest) (Seat, error)
	rejoin(ctx context.Context, gameSessionID string) (Seat, error)
	release(ctx context.Context, s Seat) error
}

// Client is a configured session client. It is safe for concurrent use;
// Close waits for the asynchronous calls in flight.
type Client struct {
	t      transport
	hooks  Hooks
	notify Notifications

	ctx    context.Context // asynchronous calls run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	joined *Seat
	closed bool
}

// ConfigureClient checks cfg and returns a client for it: InvalidParameter
// for a region that does not look like us-east-1, an endpoint that is not
// an http(s) URL, or not exactly one transport.
func ConfigureClient(cfg Config) (*Client, error) {
	if !regionPattern.MatchString(cfg.Region) {
		return nil, errorf(CodeInvalidParameter, "region %q does not look like an AWS region (us-east-1)", cfg.Region)
	}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errorf(CodeInvalidParameter, "endpoint %q must be an http:// or https:// URL", cfg.Endpoint)
		}
	}
	n := 0
	for _, set := range []bool{cfg.PlayerToken != nil, cfg.DevPlayerID != "", cfg.Credentials != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, errorf(CodeInvalidParameter, "set exactly one of PlayerToken, DevPlayerID and Credentials")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	if cfg.CreateTimeout <= 0 {
		cfg.CreateTimeout = 30 * time.Second
	}
	c := &Client{hooks: cfg.Hooks, notify: cfg.Notifications}
	if cfg.Credentials != nil {
		c.t = newControlPlane(cfg)
	} else {
		if cfg.Endpoint == "" {
			return nil, errorf(CodeInvalidParameter, "the player gateway transport needs an endpoint")
		}
		c.t = &gatewayTransport{cfg: cfg}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops new calls, cancels the asynchronous calls in flight and
// waits for them. It does not leave a joined session.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// async runs fn on a goroutine the client owns.
func (c *Client) async(fn func(ctx context.Context)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn(c.ctx)
	}()
	return true
}

var errClosed = errorf(CodeClosed, "the client is closed")

// CreateSession creates a game session and waits until it is ACTIVE; see
// CreateSessionRequest for the seat.
func (c *Client) CreateSession(ctx context.Context, r CreateSessionRequest) (Seat, error) {
	if (r.FleetID == "") == (r.AliasID == "") {
		return Seat{}, errorf(CodeInvalidParameter, "set exactly one of FleetID and AliasID")
	}
	return c.t.create(ctx, r)
}

// CreateSessionAsync is CreateSession with the result sent to
// Notifications.OnCreateSession.
func (c *Client) CreateSessionAsync(r CreateSessionRequest) {
	run(c, c.notify.OnCreateSession, func(ctx context.Context) (Seat, error) { return c.CreateSession(ctx, r) })
}

// CreateSessionOnQueue places a game session through a queue and waits
// until the placement is FULFILLED.
func (c *Client) CreateSessionOnQueue(ctx context.Context, r CreateSessionOnQueueRequest) (Seat, error) {
	if r.QueueName == "" {
		return Seat{}, errorf(CodeInvalidParameter, "QueueName is required")
	}
	return c.t.createOnQueue(ctx, r)
}

// CreateSessionOnQueueAsync is CreateSessionOnQueue with the result sent
// to Notifications.OnCreateSessionOnQueue.
func (c *Client) CreateSessionOnQueueAsync(r CreateSessionOnQueueRequest) {
	run(c, c.notify.OnCreateSessionOnQueue, func(ctx context.Context) (Seat, error) { return c.CreateSessionOnQueue(ctx, r) })
}

// SearchSessions returns one page of ACTIVE game sessions matching r.
func (c *Client) SearchSessions(ctx context.Context, r SearchSessionsRequest) (SearchSessionsResult, error) {
	if (r.FleetID == "") == (r.AliasID == "") {
		return SearchSessionsResult{}, errorf(CodeInvalidParameter, "set exactly one of FleetID and AliasID")
	}
	return c.t.search(ctx, r)
}

// SearchSessionsAsync is SearchSessions with the result sent to
// Notifications.OnSearchSessions.
func (c *Client) SearchSessionsAsync(r SearchSessionsRequest) {
	run(c, c.notify.OnSearchSessions, func(ctx context.Context) (SearchSessionsResult, error) { return c.SearchSessions(ctx, r) })
}

// run calls fn asynchronously and hands its result to handler.
func run[T any](c *Client, handler func(T, error), fn func(context.Context) (T, error)) {
	started := c.async(func(ctx context.Context) {
		v, err := fn(ctx)
		if handler != nil {
			handler(v, err)
		}
	})
	if !started && handler != nil {
		var zero T
		handler(zero, errClosed)
	}
}
