// Package owners is a node's view of which node owns each fleet when
// several nodes share one PostgreSQL, and the rule that spreads fleets
// over the live nodes (docs/several-nodes.md, "Fleet ownership").
//
// Each fleet is owned by one node at a time through a lease in the store
// (store.FleetOwner): the owner makes every decision for the fleet, and
// the store refuses a write for it from any other node (sqldb's fence).
// Every node runs Plan on what the store says at each tick, and acts only
// for itself: it takes the fleets that should be its own and whose holder
// is dead or absent, and hands fleets that should be another's to that
// node, a few at a time, so that a node joining or leaving moves fleets
// gently.
package owners

import (
	"sort"
	"sync"

	"github.com/anylift/anylift/internal/store"
)

// Map is this node's view of the fleets' owners: the leases as last read
// or moved by this node, and the nodes' forwarding addresses. It is safe
// for concurrent use; sqldb.DB and the API ask it on every call.
type Map struct {
	self string

	mu      sync.RWMutex
	on      bool
	leases  map[string]store.FleetOwner
	address map[string]string // node id → base URL of its --node-listen
	gained  []func(fleetID string, epoch int64)
	lost    []func(fleetID string)
	// missing: fleets this node holds that the last refresh did not
	// list (a refresh may have read the store before this node created
	// them); a second refresh without them forgets them.
	missing map[string]bool
}

// New returns an empty map for node self; ownership is off until Set
// turns it on.
func New(self string) *Map {
	return &Map{self: self, leases: map[string]store.FleetOwner{}, address: map[string]string{}}
}

// OnGain adds f to the functions that hear of every fleet this node
// comes to be the only writer of: a fleet it comes to own (or owns again
// at a new epoch) while ownership is in force, whether it took the lease,
// was handed it, or learned it from the store, and every fleet it holds
// when ownership comes into force. It may be called inside the
// transaction that learned the lease, before it commits. f must be quick.
func (m *Map) OnGain(f func(fleetID string, epoch int64)) {
	m.mu.Lock()
	m.gained = append(m.gained, f)
	m.mu.Unlock()
}

// OnLose adds f to the functions that hear of every fleet this node may
// no longer be the only writer of: handed to another node, taken over by
// one (this node was thought dead), deleted, or every fleet it holds when
// ownership ceases to be in force (a node that takes no part in it
// joined). f must be quick.
func (m *Map) OnLose(f func(fleetID string)) {
	m.mu.Lock()
	m.lost = append(m.lost, f)
	m.mu.Unlock()
}

// Self is this node's id.
func (m *Map) Self() string { return m.self }

// Fencing reports whether ownership is in force: every live node takes
// part in it.
func (m *Map) Fencing() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.on
}

// Held returns the epoch at which this node holds fleetID's lease.
func (m *Map) Held(fleetID string) (int64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	l, ok := m.leases[fleetID]
	if !ok || l.NodeID != m.self {
		return 0, false
	}
	return l.Epoch, true
}

// Adopt records a lease the store says this node holds.
func (m *Map) Adopt(fleetID string, epoch int64) {
	m.put(store.FleetOwner{FleetID: fleetID, NodeID: m.self, Epoch: epoch})
}

// put records lease l, and tells the gain hook when l is this node's and
// newer than what the map knew.
func (m *Map) put(l store.FleetOwner) {
	m.mu.Lock()
	old, had := m.leases[l.FleetID]
	if had && old.Epoch > l.Epoch {
		m.mu.Unlock()
		return // an older reading
	}
	m.leases[l.FleetID] = l
	gain := m.on && l.NodeID == m.self && (!had || old.NodeID != m.self || old.Epoch != l.Epoch)
	lose := had && old.NodeID == m.self && l.NodeID != m.self
	gained, lost := m.gained, m.lost
	m.mu.Unlock()
	if gain {
		for _, f := range gained {
			f(l.FleetID, l.Epoch)
		}
	}
	if lose {
		for _, f := range lost {
			f(l.FleetID)
		}
	}
}

// Route returns the forwarding address of the node owning fleetID and
// whether that is this node. With ownership off, or a fleet whose owner
// is unknown, it is ("", true): the call is served here, and the store's
// fence says whether it may write.
func (m *Map) Route(fleetID string) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.on {
		return "", true
	}
	l, ok := m.leases[fleetID]
	if !ok || l.NodeID == m.self || l.NodeID == "" {
		return "", true
	}
	addr := m.address[l.NodeID]
	if addr == "" {
		return "", true
	}
	return addr, false
}

// Owned lists the fleets this node holds, by id.
func (m *Map) Owned() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for id, l := range m.leases {
		if l.NodeID == m.self {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Owns reports whether this node holds fleetID's lease, or ownership is
// off (every node may then act for every fleet).
func (m *Map) Owns(fleetID string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.on {
		return true
	}
	l, ok := m.leases[fleetID]
	return ok && l.NodeID == m.self
}

// Refresh replaces the map's view with what the store says: the leases
// (store.FleetOwner of every fleet) and the nodes, and whether ownership
// is in force.
func (m *Map) Refresh(leases []store.FleetOwner, nodes []*store.Node, on bool) {
	addr := make(map[string]string, len(nodes))
	for _, n := range nodes {
		if n.Alive {
			addr[n.ID] = n.Address
		}
	}
	m.mu.Lock()
	wasOn := m.on
	m.on = on
	m.address = addr
	keep := make(map[string]bool, len(leases))
	for _, l := range leases {
		keep[l.FleetID] = !l.Gone
	}
	var gone []string
	missing := map[string]bool{}
	for id, l := range m.leases {
		if keep[id] {
			continue
		}
		if l.NodeID == m.self && !m.missing[id] {
			missing[id] = true
			continue
		}
		delete(m.leases, id)
		if l.NodeID == m.self {
			gone = append(gone, id)
		}
	}
	m.missing = missing
	// Ownership coming into force or ceasing changes whether this node
	// is the only writer of the fleets it holds.
	var held []store.FleetOwner
	if wasOn != on {
		for _, l := range m.leases {
			if l.NodeID == m.self {
				held = append(held, l)
			}
		}
	}
	lost, gained := m.lost, m.gained
	m.mu.Unlock()
	for _, f := range lost {
		for _, id := range gone {
			f(id)
		}
		if wasOn && !on {
			for _, l := range held {
				f(l.FleetID)
			}
		}
	}
	if on && !wasOn {
		for _, f := range gained {
			for _, l := range held {
				f(l.FleetID, l.Epoch)
			}
		}
	}
	for _, l := range leases {
		if !l.Gone {
			m.put(l)
		}
	}
}

// Moved records a lease this node moved (to itself or to another node).
func (m *Map) Moved(l store.FleetOwner) { m.put(l) }
