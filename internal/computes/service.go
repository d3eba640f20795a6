// Package computes holds the computes of Anywhere fleets and their auth
// tokens: the compute operations (RegisterCompute, DeregisterCompute,
// DescribeCompute, ListCompute, GetComputeAuthToken), the check of a
// token a server process connects with, the tokens minted for a
// RefreshConnection or a container group, and the timer that deletes
// expired tokens.
//
// It runs over the store, each operation one transaction of computes and
// tokens. What it needs of the rest of the control plane (the game
// sessions hosted on a compute that goes ended) it asks through Control,
// which internal/processes' Service implements; internal/control has a
// compute deregistered, a fleet's computes deleted, a token minted and
// the expired ones swept through control.Computes. None of the three
// imports another; internal/server wires them together.
//
// Methods take and return wire shapes that the API layer has already
// decoded and validated against the model; they check the rules the model
// cannot express and answer *game.Error kinds.
package computes

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Control is what computes need of the rest of the control plane: the
// server processes' side of a game session.
type Control interface {
	// EndComputeSessions ends the live game sessions hosted on a compute
	// being deregistered, inside tx: ACTIVATING ones in ERROR, ACTIVE ones
	// TERMINATED (INTERRUPTED), with their player sessions.
	EndComputeSessions(tx store.Tx, fleetID, computeName string) error
}

// Config holds the service's settings; zero values take the defaults
// below, which are control's for the settings control has too.
type Config struct {
	// Account names the Region and account of every ARN made.
	Account game.Account
	// AuthTokenTTL is the lifetime of a compute auth token (15 min).
	AuthTokenTTL time.Duration
	// AcceptExpiredTokens keeps every auth token minted here valid after
	// its expiry, and never sweeps one ("anylift dev": the values it
	// printed keep working for as long as its data lives). Connections
	// are still refreshed with new tokens as they near expiry.
	AcceptExpiredTokens bool
	// SDKEndpoint is returned as a compute's GameLiftServiceSdkEndpoint:
	// control's (ws://127.0.0.1:9870).
	SDKEndpoint string
	// AgentEndpoint is returned as a compute's GameLiftAgentEndpoint: the
	// control-plane API URL an agent on the compute (anylift agent) calls
	// (http://127.0.0.1:9870).
	AgentEndpoint string
}

func (c *Config) defaults() {
	c.Account = c.Account.OrDefaults()
	if c.AuthTokenTTL == 0 {
		c.AuthTokenTTL = 15 * time.Minute
	}
	if c.SDKEndpoint == "" {
		c.SDKEndpoint = "ws://127.0.0.1:9870"
	}
	if c.AgentEndpoint == "" {
		c.AgentEndpoint = "http://127.0.0.1:9870"
	}
}

// Service implements the compute operations.
type Service struct {
	store store.Store
	ctl   Control
	cfg   Config
	now   func() time.Time
}

// New returns the compute service over st, asking ctl for the rest of
// the control plane. now is the clock (time.Now when nil): the one ctl
// runs on.
func New(st store.Store, ctl Control, cfg Config, now func() time.Time) *Service {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, ctl: ctl, cfg: cfg, now: now}
}

// clock returns the current time, truncated to the millisecond precision
// that timestamps have on the wire and in the store.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// update and view run fn in a transaction.
func (s *Service) update(ctx context.Context, fn func(store.Tx) error) error {
	return s.store.Update(ctx, fn)
}

func (s *Service) view(ctx context.Context, fn func(store.Tx) error) error {
	return s.store.View(ctx, fn)
}
