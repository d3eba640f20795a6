package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
)

// Several nodes: each node listens for pushes forwarded by the others on
// NodeListen, signed with NodeSecret, and forwards its own pushes for
// processes held elsewhere.

// listenNode opens the internal listener when NodeListen is set; serveNode
// serves it once the API and the process endpoint exist.
func (s *Server) listenNode() error {
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
	return nil
}

// serveNode serves the internal listener: pushes for the processes
// connected here, and the API calls and process connections other nodes
// relay here, served as the API port serves them (the same gate, and the
// same WebSocket cap for the node listener's upgrades). Its body cap
// leaves room for a relayed request's envelope.
func (s *Server) serveNode() {
	if s.nodeLn == nil {
		return
	}
	v := cluster.NewVerifier([]byte(s.cfg.NodeSecret), 0, s.cfg.Now)
	relays := cluster.Relays{API: s.relayedAPI(), Player: s.relayedPlayer(), Process: s.gate(s.ownedOnly(capUpgrades(s.hub)))}
	s.nodeHTTP = newHTTPServer(cluster.Handler(v, s.procs, relays, s.cfg.Log), cluster.MaxRelayBytes, s.limits, s.cfg.Log)
	ln := s.nodeLn
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.nodeHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("node listener stopped", "err", err)
		}
	}()
}

// relayedAPI serves the requests to the API listener that other nodes
// relay here (POSTs all): the control plane, agents' reports, Anylift's
// own operations and the console's forms, routed as the API listener
// routes them.
func (s *Server) relayedAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.AgentReportPath, s.api.ServeAgentReport)
	mux.Handle(api.ExtensionPattern, s.gate(http.HandlerFunc(s.api.ServeExtension)))
	mux.Handle("POST /console/", s.obs.console)
	mux.Handle("/", s.gate(s.api))
	return mux
}

// SetRouter sets what tells which node owns each fleet. API calls and
// process connections for a fleet that another node owns are then relayed
// to it over the node channel (docs/several-nodes.md, "Relays"). nil, the
// default, serves everything here. Without a node secret nothing can be
// relayed and the router is not asked.
func (s *Server) SetRouter(r cluster.Router) {
	s.api.SetRouter(r)
	if s.procs.fwd != nil {
		s.obs.console.SetRelay(r, s.procs.fwd)
		if s.gateway != nil {
			s.gateway.SetRelay(r, s.procs.fwd)
		}
	}
	if r == nil {
		s.router.Store(nil)
		return
	}
	s.router.Store(&r)
}

// CloseFleet closes the connections on this node of fleetID's processes,
// those other nodes relay here included, with 1012, for a node that no
// longer owns the fleet: the SDKs reconnect through the load balancer to
// wherever the fleet is served. It returns how many it closed.
func (s *Server) CloseFleet(fleetID, reason string) int {
	return s.hub.CloseFleet(fleetID, reason)
}

// processEndpoint serves a process's WebSocket upgrade here, or relays it
// to the node owning the process's fleet.
func (s *Server) processEndpoint(w http.ResponseWriter, r *http.Request) {
	if rt := s.router.Load(); rt != nil && s.procs.fwd != nil {
		if fleet := sdkserver.HandshakeFleet(r); fleet != "" {
			if base, local := (*rt).Route(fleet); !local && base != "" {
				s.relayProcess(w, r, base)
				return
			}
		}
	}
	s.hub.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), entryKey{}, true)))
}

// entryKey marks, in its context, a process's connection that reached
// this node first, rather than relayed here by another node.
type entryKey struct{}

// refuseHandshake answers a process's handshake that was refused for a
// reason other than its credentials (sdkserver.Config.Refuse):
//   - its fleet is owned by another node, which this node's view of the
//     leases had not caught up with: a connection that reached this node
//     first is relayed to the owner the store names; one that another node
//     relayed here is answered 500 naming the owner, for that node to
//     relay it (only the entry relays again);
//   - anything else that is not a refusal of the process (the store could
//     not be read, say) is answered 500, which the SDKs retry, rather than
//     403, which says the credentials are wrong.
func (s *Server) refuseHandshake(w http.ResponseWriter, r *http.Request, err error) bool {
	var no *store.NotOwner
	switch {
	case errors.As(err, &no):
		entry, _ := r.Context().Value(entryKey{}).(bool)
		if entry && no.Address != "" && s.procs.fwd != nil && no.Address != s.nodeAddress() {
			s.cfg.Log.Info("relaying a process connection to its fleet's owner: this node's view of the leases was behind",
				"remote", r.RemoteAddr, "fleet", no.FleetID, "owner", no.NodeID)
			s.relayProcess(w, r, no.Address)
			return true
		}
		s.cfg.Log.Info("refused a process connection: another node owns its fleet", "remote", r.RemoteAddr,
			"fleet", no.FleetID, "owner", no.NodeID, "owner_address", no.Address)
		if no.Address != "" {
			w.Header().Set(cluster.OwnerHeader, no.Address)
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "this node does not own the process's fleet; retry", http.StatusInternalServerError)
		return true
	case game.KindOf(err) == game.Internal:
		s.cfg.Log.Warn("refused a process connection: its handshake could not be checked", "remote", r.RemoteAddr,
			"fleet", sdkserver.HandshakeFleet(r), "err", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the service could not check this connection; retry", http.StatusInternalServerError)
		return true
	}
	return false
}

// relayProcess relays a process's connection to the node at base and
// pipes it until either side closes or this server does. When that node
// refuses it for a fleet it does not own, naming the owner (this node's
// view was older than the store), the connection goes to that owner
// once more, or is served here when the owner is this node. A relay that
// could not be opened is answered 500, which the SDKs retry.
func (s *Server) relayProcess(w http.ResponseWriter, r *http.Request, base string) {
	refused, ok := s.relayProcessTo(w, r, base)
	if !ok {
		return
	}
	if owner := refused.Owner; owner != "" && owner != base {
		if owner == s.nodeAddress() {
			s.cfg.Log.Info("serving a process connection here: the node it was relayed to says this node owns its fleet",
				"node", base, "remote", r.RemoteAddr, "fleet", sdkserver.HandshakeFleet(r))
			s.hub.ServeHTTP(w, r)
			return
		}
		if refused, ok = s.relayProcessTo(w, r, owner); !ok {
			return
		}
		base = owner
	}
	s.cfg.Log.Info("refused a process connection: the node it was relayed to refused it", "node", base, "remote", r.RemoteAddr,
		"fleet", sdkserver.HandshakeFleet(r), "status", refused.Status, "reason", refused.Reason())
	refused.Write(w)
}

// relayProcessTo relays a process's connection to the node at base. It
// returns that node's refusal, unwritten, with ok; ok is false when the
// connection was served (piped, then closed) or answered here.
func (s *Server) relayProcessTo(w http.ResponseWriter, r *http.Request, base string) (*cluster.Refusal, bool) {
	ctx, done, ok := s.pipes.begin()
	if !ok {
		s.cfg.Log.Info("refused a process connection: this node is shutting down", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "service unavailable: this node is shutting down", http.StatusServiceUnavailable)
		return nil, false
	}
	defer done()
	refused, err := s.procs.fwd.RelayProcess(ctx, w, r, base)
	if err != nil {
		s.cfg.Log.Warn("refused a process connection: relaying it to its fleet's owner failed", "node", base, "remote", r.RemoteAddr,
			"fleet", sdkserver.HandshakeFleet(r), "err", err)
		// 500, not 503: see api.Handler.elsewhere.
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the node serving this fleet cannot be reached; retry", http.StatusInternalServerError)
		return nil, false
	}
	return refused, refused != nil
}

// pipes are the process connections this node relays to other nodes,
// which close with it.
type pipes struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func newPipes() *pipes {
	ctx, cancel := context.WithCancel(context.Background())
	return &pipes{ctx: ctx, cancel: cancel}
}

// begin counts a new pipe, unless the server is closing; done uncounts it.
func (p *pipes) begin() (ctx context.Context, done func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, false
	}
	p.wg.Add(1)
	return p.ctx, p.wg.Done, true
}

// close ends every pipe and waits for them.
func (p *pipes) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
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
func (b *endpoint) PushLocal(r processes.Ref, msg sdkwire.Push) bool {
	return b.hub.Push(toProcess(r), msg)
}

// Wake implements cluster.Local: another node wakes this one when a
// fleet's lease is now this node's to act on.
func (b *endpoint) Wake() {
	b.svc.WakeOwners()
	b.qs.WakePlacer()
}

// WakePlacer implements cluster.Local: another node wakes this one when a
// placement is now this node's to place.
func (b *endpoint) WakePlacer() { b.qs.WakePlacer() }

// RunFleetMatch implements cluster.Local.
func (b *endpoint) RunFleetMatch(ctx context.Context, call *flexmatch.FleetMatchCall) error {
	return b.fm.RunFleetMatch(ctx, call)
}

// DisconnectLocal implements cluster.Local.
func (b *endpoint) DisconnectLocal(r processes.Ref, reason string) bool {
	ok := b.hub.Disconnect(toProcess(r), reason)
	b.hub.Forget(toProcess(r))
	return ok
}

// forward delivers through the node holding r's connection, when that is
// a live node other than this one. A process held by no live node misses
// the message; what matters is sent again from the store when it
// reconnects (control.ProcessResumed).
func (b *endpoint) forward(r processes.Ref, send func(ctx context.Context, base string) (bool, error)) bool {
	if b.fwd == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cluster.Timeout)
	defer cancel()
	n, err := b.ps.ProcessHolder(ctx, r)
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
			if sdkserver.IsUpgrade(r) {
				s.cfg.Log.Warn("refused a process connection: this node cannot reach its database", "remote", r.RemoteAddr,
					"fleet", sdkserver.HandshakeFleet(r), "err", err)
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "service unavailable: this node cannot reach its database", http.StatusServiceUnavailable)
			return
		}
		if sdkserver.IsUpgrade(r) && s.svc.Draining() {
			s.cfg.Log.Info("refused a process connection: this node is draining", "remote", r.RemoteAddr,
				"fleet", sdkserver.HandshakeFleet(r))
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
		if err := s.ps.DrainProcess(ctx, ref(p)); err != nil {
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
