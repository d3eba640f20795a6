// Package gateway is Anylift's player gateway: a small HTTP+JSON API for
// game clients, on its own listener, apart from the admin API. Players
// create a game session (and get a seat in it), search sessions, join,
// leave and rejoin; nothing else. Every request carries a player token
// (a JWT from the studio's auth service, checked before anything else)
// and is rate-limited per player. The gateway calls the control layer in
// process; its shapes are in sdk/playerwire.
package gateway

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// Control is the part of the control layer the gateway uses;
// *control.Service implements it.
type Control interface {
	CreateGameSession(context.Context, *wire.CreateGameSessionInput) (*wire.CreateGameSessionOutput, error)
	DescribeGameSessions(context.Context, *wire.DescribeGameSessionsInput) (*wire.DescribeGameSessionsOutput, error)
	SearchGameSessions(context.Context, *wire.SearchGameSessionsInput) (*wire.SearchGameSessionsOutput, error)
	CreatePlayerSession(context.Context, *wire.CreatePlayerSessionInput) (*wire.CreatePlayerSessionOutput, error)
	DescribePlayerSessions(context.Context, *wire.DescribePlayerSessionsInput) (*wire.DescribePlayerSessionsOutput, error)
	RemovePlayerSession(ctx context.Context, gameSessionID, playerSessionID string) (*game.PlayerSession, error)
	ResolveAlias(context.Context, *wire.ResolveAliasInput) (*wire.ResolveAliasOutput, error)
	DescribeFleetLocationAttributes(context.Context, *wire.DescribeFleetLocationAttributesInput) (*wire.DescribeFleetLocationAttributesOutput, error)
}

// Config tunes the gateway; zero values take the defaults noted.
type Config struct {
	Auth AuthConfig
	// AllowedFleets, AllowedAliases and AllowedQueues are what players may
	// create sessions on, search and join; "*" allows every one. Empty
	// lists allow nothing, except in dev mode where they allow everything.
	AllowedFleets, AllowedAliases, AllowedQueues []string
	// RatePerSecond and Burst limit each player's requests (10/s, burst
	// 20); a negative rate turns the limit off. MaxTrackedPlayers bounds
	// the limiter's memory (100000 players; the idlest are forgotten).
	RatePerSecond     float64
	Burst             int
	MaxTrackedPlayers int
	// CORSOrigins may call the gateway from a browser; "*" is any origin.
	CORSOrigins []string
	// RejoinGrace is how long a dropped or left seat stays held for its
	// player (2 min); negative turns rejoin off.
	RejoinGrace time.Duration
	// CreateTimeout bounds how long a create waits for the game session
	// to become ACTIVE (or a queue placement to be fulfilled) (30 s).
	CreateTimeout time.Duration

	Now func() time.Time
	Log *slog.Logger
}

func (c *Config) defaults() {
	if c.RatePerSecond == 0 {
		c.RatePerSecond = 10
	}
	if c.Burst <= 0 {
		c.Burst = 20
	}
	if c.MaxTrackedPlayers <= 0 {
		c.MaxTrackedPlayers = 100000
	}
	if c.RejoinGrace == 0 {
		c.RejoinGrace = 2 * time.Minute
	}
	if c.CreateTimeout <= 0 {
		c.CreateTimeout = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Auth.DevMode && len(c.AllowedFleets)+len(c.AllowedAliases)+len(c.AllowedQueues) == 0 {
		c.AllowedFleets, c.AllowedAliases, c.AllowedQueues = []string{"*"}, []string{"*"}, []string{"*"}
	}
}

// Gateway serves the player API. It starts no goroutines of its own.
type Gateway struct {
	ctl    Control
	placer Placer
	cfg    Config
	auth   *authenticator
	limit  *limiter
	log    *slog.Logger
	now    func() time.Time
	// seatLocks serialise the hold check and the reservation of joins to
	// one game session on this node (with fleet ownership, on the node
	// owning its fleet: relay.go).
	seatLocks [64]sync.Mutex
	// relaying sends requests about other nodes' fleets to them; nil
	// serves everything here (relay.go).
	relaying cluster.Relaying[Relayer]
}

// New returns a gateway over ctl. It fails when the player token
// configuration is unusable (no key outside dev mode, a bad key file).
func New(ctl Control, cfg Config) (*Gateway, error) {
	cfg.defaults()
	a, err := newAuthenticator(cfg.Auth, cfg.Now)
	if err != nil {
		return nil, err
	}
	return &Gateway{ctl: ctl, cfg: cfg, auth: a, log: cfg.Log, now: cfg.Now,
		limit: newLimiter(cfg.RatePerSecond, cfg.Burst, cfg.MaxTrackedPlayers, cfg.Now)}, nil
}

// CreateTimeout is how long a create may wait for its game session.
func (g *Gateway) CreateTimeout() time.Duration { return g.cfg.CreateTimeout }

// SetPlacer gives the gateway queue placement, for creates on a queue.
func (g *Gateway) SetPlacer(p Placer) { g.placer = p }

// lockSession takes the seat lock of a game session.
func (g *Gateway) lockSession(id string) func() {
	h := fnv.New32a()
	h.Write([]byte(id))
	m := &g.seatLocks[h.Sum32()%uint32(len(g.seatLocks))]
	m.Lock()
	return m.Unlock
}

// Handler is the gateway's HTTP handler.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/sessions", g.endpoint(g.serveCreate))
	mux.Handle("/v1/sessions/search", g.endpoint(g.serveSearch))
	mux.Handle("/v1/sessions/join", g.endpoint(g.serveJoin))
	mux.Handle("/v1/sessions/rejoin", g.endpoint(g.serveRejoin))
	mux.Handle("/v1/sessions/leave", g.endpoint(g.serveLeave))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		g.cors(w, r)
		g.writeError(w, fail(http.StatusNotFound, CodeNotFound, "No such player gateway endpoint"))
	})
	return mux
}

// call is one endpoint's work for an authenticated player; r's body is
// read already (a request may be relayed to another node).
type call func(ctx context.Context, player string, r *http.Request) (any, error)

// endpoint wraps a call with CORS, the method check, authentication and
// the per-player rate limit, in that order: nothing reaches the control
// layer before the token is verified. A call about a fleet another node
// owns is relayed to it (relay.go).
func (g *Gateway) endpoint(fn call) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.cors(w, r) && r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			g.writeError(w, fail(http.StatusMethodNotAllowed, CodeInvalidRequest, "Use POST"))
			return
		}
		player, err := g.auth.player(r)
		if err != nil {
			g.writeError(w, err)
			return
		}
		if counted(r) && !g.limit.allow(player) {
			g.writeError(w, fail(http.StatusTooManyRequests, CodeRateLimited, "Too many requests; slow down and retry shortly"))
			return
		}
		// The largest body any endpoint takes, and one byte more, which
		// its decoder refuses as too large.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxCreateBody+1))
		if err != nil {
			g.writeError(w, fail(http.StatusBadRequest, CodeInvalidRequest, "The request body could not be read"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		out, err := fn(r.Context(), player, r)
		if err != nil {
			if !g.elsewhere(w, r, body, err) {
				g.writeError(w, err)
			}
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// errForbidden answers a target the operator has not opened to players.
func errForbidden(what, id string) error {
	return fail(http.StatusForbidden, CodeForbidden, "Players may not use "+what+" "+clip(id))
}

// allowed reports whether id (or "*") is in list.
func allowed(list []string, id string) bool {
	for _, v := range list {
		if v == "*" || v == id {
			return true
		}
	}
	return false
}

// fleetAllowed reports whether players may use fleetID: it is allowed
// itself, or an allowed alias routes to it.
func (g *Gateway) fleetAllowed(ctx context.Context, fleetID string) (bool, error) {
	if allowed(g.cfg.AllowedFleets, fleetID) || allowed(g.cfg.AllowedAliases, "*") {
		return true, nil
	}
	for _, a := range g.cfg.AllowedAliases {
		out, err := g.ctl.ResolveAlias(ctx, &wire.ResolveAliasInput{AliasId: wire.String(a)})
		if game.IsKind(err, game.NotFound) || game.IsKind(err, game.TerminalRoutingStrategy) {
			continue
		}
		if err != nil {
			return false, err
		}
		if wire.Deref(out.FleetId) == fleetID {
			return true, nil
		}
	}
	return g.queueRoutesTo(ctx, fleetID)
}

// checkTarget checks that players may use the fleet or alias named.
func (g *Gateway) checkTarget(fleetID, aliasID string) error {
	if fleetID != "" && !allowed(g.cfg.AllowedFleets, fleetID) {
		return errForbidden("fleet", fleetID)
	}
	if aliasID != "" && !allowed(g.cfg.AllowedAliases, aliasID) {
		return errForbidden("alias", aliasID)
	}
	return nil
}
