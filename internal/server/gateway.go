package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/gateway"
)

// startGateway opens the player gateway's own listener when
// cfg.PlayerListen is set; it is served by its own http.Server so that no
// admin route is reachable from it.
func (s *Server) startGateway() error {
	if s.cfg.PlayerListen == "" {
		return nil
	}
	gc := s.cfg.Player
	if gc.Now == nil {
		gc.Now = s.cfg.Now
	}
	gc.Log = s.cfg.Log
	gw, err := gateway.New(s.svc, gc)
	if err != nil {
		return err
	}
	gw.SetPlacer(gateway.NewQueuePlacer(s.svc))
	if gc.Auth.DevMode {
		s.cfg.Log.Warn("INSECURE: the player gateway is in dev mode; players are not authenticated. Use this for local development only.")
	}
	ln, err := listenAs("--player-listen", s.cfg.PlayerListen)
	if err != nil {
		return err
	}
	s.gateway, s.playerLn = gw, s.limit(ln, "player gateway")
	lim := s.limits // a create may wait CreateTimeout before it answers
	lim.WriteTimeout = max(lim.WriteTimeout, gc.CreateTimeout+30*time.Second)
	s.playerHTTP = newHTTPServer(gw.Handler(), api.MaxBodyBytes, lim, s.cfg.Log)
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
