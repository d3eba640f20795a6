package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// Ownership is a node's part in fleet ownership on PostgreSQL
// (docs/several-nodes.md, "Fleet ownership"). On SQLite it means nothing:
// one node holds the data directory.
type Ownership uint8

const (
	// OwnershipDefault takes part when the node has a forwarding listener
	// (NodeListen): every node that may serve beside others has one, and
	// other nodes relay the calls for its fleets to it there. A node
	// without one can only serve alone, and writes as the shared mode
	// does.
	OwnershipDefault Ownership = iota
	// OwnershipOn takes part, and refuses to start without NodeListen
	// ("--fleet-ownership").
	OwnershipOn
	// OwnershipOff is the shared mode: the node writes every fleet through
	// the database, and while it is live ownership is off on every node
	// ("--fleet-ownership=false").
	OwnershipOff
)

// OwnsFleets reports whether a node of c is to take part in fleet ownership.
func (c Config) OwnsFleets() bool {
	if !onPostgres(c) {
		return false
	}
	switch c.FleetOwnership {
	case OwnershipOn:
		return true
	case OwnershipOff:
		return false
	}
	return c.NodeListen != ""
}

// ownershipWhy says in a few words how the node came to take part in fleet
// ownership or not, for the log line at its start.
func (c Config) ownershipWhy() string {
	switch {
	case c.FleetOwnership == OwnershipOn:
		return "--fleet-ownership"
	case c.FleetOwnership == OwnershipOff:
		return "--fleet-ownership=false: every node writes every fleet, and ownership is off on every node while this one is live"
	case c.NodeListen != "":
		return "the default with --node-listen"
	}
	return "no --node-listen: this node can only serve alone, and writes every fleet through the database"
}

// startOwnership makes the node take part in fleet ownership
// (internal/owners, docs/several-nodes.md) when it is asked to and shares
// PostgreSQL with others: the store fences every fleet write against the
// node's leases, the service moves leases at every tick, calls and
// process connections for another node's fleet are relayed to it, a
// placement for another node's fleet wakes that node's placer, the
// connections of a fleet this node no longer owns are closed, so that
// their SDKs reconnect to wherever it is served, and the node holds the
// fleets it owns in memory (ownedMemory).
func (s *Server) startOwnership() error {
	db, ok := s.store.(*sqldb.DB)
	if !ok || db.Dialect() != "postgres" {
		return nil
	}
	if !s.cfg.OwnsFleets() {
		s.cfg.Log.Info("fleet ownership off", "why", s.cfg.ownershipWhy())
		return nil
	}
	if s.procs.fwd == nil || s.cfg.NodeListen == "" {
		return errors.New("--fleet-ownership needs --node-listen and the node secret: other nodes relay the calls for this node's fleets to it. " +
			"Give this node --node-listen (and ANYLIFT_NODE_SECRET), or leave --fleet-ownership out to run one node alone without it")
	}
	s.cfg.Log.Info("fleet ownership on", "why", s.cfg.ownershipWhy())
	m := owners.New(s.svc.NodeID())
	m.OnLose(func(fleetID string) {
		s.losing.Add(1)
		go func() {
			defer s.losing.Done()
			if n := s.CloseFleet(fleetID, "the fleet moved to another node"); n > 0 {
				s.cfg.Log.Info("closed the connections of a fleet now owned by another node", "fleet", fleetID, "connections", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), cluster.Timeout)
			defer cancel()
			if err := s.svc.FleetMoved(ctx, fleetID); err != nil {
				s.cfg.Log.Warn("ending the faults of a fleet now owned by another node", "fleet", fleetID, "err", err)
			}
		}()
	})
	db.SetOwners(m)
	s.svc.SetOwners(m)
	s.svc.SetOwnerWake(func(fleetID string, leases bool) { s.wakeOwner(m, fleetID, leases) })
	s.fm.SetFleetMatch(m, func(ctx context.Context, base string, call *flexmatch.FleetMatchCall) error {
		ctx, cancel := context.WithTimeout(ctx, cluster.Timeout)
		defer cancel()
		return s.procs.fwd.Match(ctx, base, call)
	})
	s.SetRouter(m)
	s.api.SetPeers(s.peerAddresses)
	s.owners = m
	s.ownedMemory(db, m)
	return nil
}

// wakeOwner wakes the placer of the node owning fleetID (and, with
// leases, has it read the leases: it has just been handed the fleet), in
// the background: the placer does not wait on another node. Wakes of one
// node and kind coalesce while one is on its way; one asked for meanwhile
// is sent after it, so a placement started after the other placer looked
// is seen.
func (s *Server) wakeOwner(m *owners.Map, fleetID string, leases bool) {
	base, local := m.Route(fleetID)
	if local || base == "" {
		return
	}
	key, wake := base+" placer", s.procs.fwd.WakePlacer
	if leases {
		key, wake = base+" leases", s.procs.fwd.Wake
	}
	v, busy := s.waking.LoadOrStore(key, new(atomic.Bool))
	again := v.(*atomic.Bool)
	if busy {
		again.Store(true)
		return
	}
	go func() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), cluster.Timeout)
			err := wake(ctx, base)
			cancel()
			if err != nil && !errors.Is(err, cluster.ErrPeerDown) {
				s.cfg.Log.Warn("waking another node's placer", "node", base, "err", err)
			}
			if !again.Swap(false) {
				s.waking.Delete(key)
				if !again.Swap(false) {
					return
				}
				if _, busy := s.waking.LoadOrStore(key, again); busy {
					return // another wake took over
				}
			}
		}
	}()
}

// ownedOnly serves a process connection relayed here only for a fleet
// this node owns. Served here otherwise, every request of the process
// would be refused by the store. This node's view of the leases is that
// of its last tick, and so may be the entry's: a hand-off reaches the
// views of the nodes other than the two of the move at their next tick. So before
// refusing, it reads the lease from the store: a fleet handed to this node
// whose hand-off it has not read yet is served (and its lease adopted),
// and a refusal names the owner the store gives (cluster.OwnerHeader),
// to which the entry relays the connection once more. A refusal is
// answered 500, which the SDKs retry.
func (s *Server) ownedOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fleet := ""
		if s.owners != nil {
			fleet = sdkserver.HandshakeFleet(r)
		}
		if fleet == "" || s.owners.Owns(fleet) {
			next.ServeHTTP(w, r)
			return
		}
		l, addr, err := s.svc.FleetLease(r.Context(), fleet)
		switch {
		case err != nil:
			s.cfg.Log.Warn("refused a process connection relayed here: reading its fleet's lease failed", "fleet", fleet,
				"remote", r.RemoteAddr, "err", err)
		case l.NodeID == s.owners.Self():
			s.owners.Adopt(fleet, l.Epoch)
			next.ServeHTTP(w, r)
			return
		case l.NodeID == "":
			s.cfg.Log.Info("refused a process connection relayed here: no node owns its fleet at the moment", "fleet", fleet,
				"remote", r.RemoteAddr)
		default:
			s.cfg.Log.Info("refused a process connection relayed here: another node owns its fleet", "fleet", fleet,
				"remote", r.RemoteAddr, "owner", l.NodeID, "epoch", l.Epoch, "owner_address", addr)
			if addr != "" {
				w.Header().Set(cluster.OwnerHeader, addr)
			}
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "this node does not own the process's fleet; retry", http.StatusInternalServerError)
	})
}

// Owners is the node's view of fleet ownership, nil when it takes no part.
func (s *Server) Owners() *owners.Map { return s.owners }

// peerAddresses lists the forwarding addresses of the other live nodes.
func (s *Server) peerAddresses(ctx context.Context) ([]string, error) {
	peers, err := s.peers(ctx)
	var out []string
	for _, n := range peers {
		if n.Address != "" {
			out = append(out, n.Address)
		}
	}
	return out, err
}
