package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/gateway"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/wire"
)

// newGateway builds the player gateway when cfg.PlayerListen is set, so
// that the node listener can serve the player requests other nodes relay
// here; startGateway opens its listener.
func (s *Server) newGateway() error {
	if s.cfg.PlayerListen == "" {
		return nil
	}
	gc := s.playerConfig()
	gw, err := gateway.New(s.PlayerControl(), gc)
	if err != nil {
		return err
	}
	gw.SetPlacer(gateway.NewQueuePlacer(s.qs, s.svc))
	if rt := s.router.Load(); rt != nil && s.procs.fwd != nil {
		gw.SetRelay(*rt, s.procs.fwd)
	}
	s.gateway = gw
	return nil
}

// playerConfig is the gateway's configuration, with the server's clock
// and log.
func (s *Server) playerConfig() gateway.Config {
	gc := s.cfg.Player
	if gc.Now == nil {
		gc.Now = s.cfg.Now
	}
	gc.Log = s.cfg.Log
	return gc
}

// playerWriteTimeout bounds the answer of a player request: a create may
// wait CreateTimeout before it answers.
func (s *Server) playerWriteTimeout() time.Duration {
	return max(s.limits.WriteTimeout, s.gateway.CreateTimeout()+30*time.Second)
}

// relayedPlayer serves the player requests other nodes relay here, with
// the gateway's write timeout rather than the node listener's, and no
// read deadline (the relayed request is read whole already; left, it
// would end a create that waits longer); nil without a gateway.
func (s *Server) relayedPlayer() http.Handler {
	if s.gateway == nil {
		return nil
	}
	h, d := s.gateway.Handler(), s.playerWriteTimeout()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(d))
		rc.SetReadDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}

// startGateway opens the player gateway's own listener; it is served by
// its own http.Server so that no admin route is reachable from it.
func (s *Server) startGateway() error {
	if s.gateway == nil {
		return nil
	}
	if s.playerConfig().Auth.DevMode {
		s.cfg.Log.Warn("INSECURE: the player gateway is in dev mode; players are not authenticated. Use this for local development only.")
	}
	ln, err := listenAs("--player-listen", s.cfg.PlayerListen)
	if err != nil {
		return err
	}
	s.playerLn = s.limit(ln, "player gateway")
	lim := s.limits
	lim.WriteTimeout = s.playerWriteTimeout()
	s.playerHTTP = newHTTPServer(s.gateway.Handler(), api.MaxBodyBytes, lim, s.cfg.Log)
	// Game clients may speak TLS to the same port (the same certificate
	// as the API port).
	ln = newDualListener(s.playerLn, s.tlsCfg, s.limits.ReadHeaderTimeout)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.playerHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("listener stopped", "listener", "player gateway", "err", err)
		}
	}()
	return nil
}

// PlayerAddr is the player gateway's address, or "" when it is off.
func (s *Server) PlayerAddr() string {
	if s.playerLn == nil {
		return ""
	}
	return s.playerLn.Addr().String()
}

// Gateway is the player gateway, or nil when it is off.
func (s *Server) Gateway() *gateway.Gateway { return s.gateway }

// PlayerControl is the control plane as the player gateway asks it: the
// game and player session operations from the sessions' service, a
// player session removed from the server processes', the rest (an alias
// resolved, a fleet's locations) from control's.
func (s *Server) PlayerControl() gateway.Control { return playerControl{s.ss, s.ps, s.svc} }

type playerControl struct {
	*sessions.Service
	ps  *processes.Service
	ctl *control.Service
}

func (p playerControl) RemovePlayerSession(ctx context.Context, gameSessionID, playerSessionID string) (*game.PlayerSession, error) {
	return p.ps.RemovePlayerSession(ctx, gameSessionID, playerSessionID)
}

func (p playerControl) ResolveAlias(ctx context.Context, in *wire.ResolveAliasInput) (*wire.ResolveAliasOutput, error) {
	return p.ctl.ResolveAlias(ctx, in)
}

func (p playerControl) DescribeFleetLocationAttributes(ctx context.Context, in *wire.DescribeFleetLocationAttributesInput) (*wire.DescribeFleetLocationAttributesOutput, error) {
	return p.ctl.DescribeFleetLocationAttributes(ctx, in)
}
