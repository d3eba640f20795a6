package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
)

// Several nodes: each node listens for pushes forwarded by the others on
// NodeListen, signed with NodeSecret, and forwards its own pushes for
// processes held elsewhere.

// startNodeListener opens the internal listener when NodeListen is set.
func (s *Server) startNodeListener() error {
	if s.cfg.NodeListen == "" {
		return nil
	}
	if len(s.cfg.NodeSecret) < 16 {
		return errors.New("--node-listen needs --node-secret of at least 16 characters, the same on every node")
	}
	ln, err := listenAs("--node-listen", s.cfg.NodeListen)
	if err != nil {
		return fmt.Errorf("--node-listen: %w", err)
	}
	s.nodeLn = s.limit(ln, "node")
	ln = s.nodeLn
	v := cluster.NewVerifier([]byte(s.cfg.NodeSecret), 0, s.cfg.Now)
	s.nodeHTTP = newHTTPServer(cluster.Handler(v, s.procs, s.cfg.Log), s.limits, s.cfg.Log)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.nodeHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("node listener stopped", "err", err)
		}
	}()
	return nil
}

// nodeAddress is the base URL other nodes forward to: NodeAdvertise, else
// the internal listener's address; empty without a listener.
func (s *Server) nodeAddress() string {
	if s.cfg.NodeListen == "" {
		return ""
	}
	if s.cfg.NodeAdvertise != "" {
		return "http://" + s.cfg.NodeAdvertise
	}
	return "http://" + s.nodeLn.Addr().String()
}

// NodeAddr is the internal listener's address, or "" when there is none.
func (s *Server) NodeAddr() string {
	if s.nodeLn == nil {
		return ""
	}
	return s.nodeLn.Addr().String()
}

// PushLocal implements cluster.Local.
func (b *processes) PushLocal(r control.ProcessRef, msg sdkwire.Push) bool {
	return b.hub.Push(toProcess(r), msg)
}

// DisconnectLocal implements cluster.Local.
func (b *processes) DisconnectLocal(r control.ProcessRef, reason string) bool {
	ok := b.hub.Disconnect(toProcess(r), reason)
	b.hub.Forget(toProcess(r))
	return ok
}

// forward delivers through the node holding r's connection, when that is
// a live node other than this one. A process held by no live node misses
// the message; what matters is sent again from the store when it
// reconnects (control.ProcessResumed).
func (b *processes) forward(r control.ProcessRef, send func(ctx context.Context, base string) (bool, error)) bool {
	if b.fwd == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cluster.Timeout)
	defer cancel()
	n, err := b.svc.ProcessHolder(ctx, r)
	if err != nil || n == nil || n.Address == "" {
		return false
	}
	ok, err := send(ctx, n.Address)
	if errors.Is(err, cluster.ErrPeerDown) {
		b.log.Debug("not forwarding to a node that did not answer moments ago", "node", n.ID, "process", r.PID)
	} else if err != nil {
		b.log.Warn("forwarding to a node failed", "node", n.ID, "process", r.PID, "err", err)
	}
	return ok
}

// gate refuses API calls and process connections with 503 while the
// store is unreachable (a node must not answer from a database it cannot
// see), and process connections while the node drains.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.svc.StoreReachable(); err != nil {
			if api.Match(r) {
				s.api.Unavailable(w, r, "Service unavailable: this node cannot reach its database; retry.")
				return
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "service unavailable: this node cannot reach its database", http.StatusServiceUnavailable)
			return
		}
		if sdkserver.IsUpgrade(r) && s.svc.Draining() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "service unavailable: this node is draining", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// drain hands this node's processes to other nodes before it stops: it
// marks itself draining (refusing new process connections), sends each
// connected process RefreshConnection to the advertised SDK endpoint, and
// waits until they have gone or ctx ends. With no other live node there is
// nowhere to go, and it returns at once.
func (s *Server) drain(ctx context.Context) {
	if !onPostgres(s.cfg) || !s.otherNodeAlive(ctx) {
		return
	}
	s.svc.SetDraining(true)
	procs := s.hub.Processes()
	s.cfg.Log.Info("draining: handing processes to other nodes", "processes", len(procs))
	for _, p := range procs {
		if err := s.svc.DrainProcess(ctx, ref(p)); err != nil {
			s.cfg.Log.Warn("draining a process", "process", p.PID, "err", err)
		}
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for s.hub.Connections() > 0 {
		select {
		case <-ctx.Done():
			s.cfg.Log.Warn("drain timed out", "connections", s.hub.Connections())
			return
		case <-t.C:
		}
	}
}

func (s *Server) otherNodeAlive(ctx context.Context) bool {
	peers, _ := s.peers(ctx)
	for _, n := range peers {
		if !n.Draining {
			return true
		}
	}
	return false
}
