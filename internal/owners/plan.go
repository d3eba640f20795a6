package owners

import (
	"hash/fnv"
	"sort"

	"github.com/anylift/anylift/internal/store"
)

// On reports whether fleet ownership is in force among nodes: every live
// node takes part in it. A live node of an older version, which writes
// every fleet without a lease, turns it off until it leaves.
func On(nodes []*store.Node) bool {
	any := false
	for _, n := range nodes {
		if !n.Alive {
			continue
		}
		if !n.OwnsFleets {
			return false
		}
		any = true
	}
	return any
}

// Owner returns the node that should own fleetID among candidates (node
// ids), by rendezvous hashing: each node's score for the fleet is a hash
// of the pair, and the highest wins. A node joining or leaving changes the
// owner only of the fleets it wins or held, about 1/N of them.
func Owner(fleetID string, candidates []string) string {
	best, bestScore := "", uint64(0)
	for _, n := range candidates {
		if s := score(fleetID, n); best == "" || s > bestScore || (s == bestScore && n < best) {
			best, bestScore = n, s
		}
	}
	return best
}

func score(fleetID, nodeID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(fleetID))
	h.Write([]byte{0})
	h.Write([]byte(nodeID))
	x := h.Sum64()
	// splitmix64's finalizer spreads FNV's close outputs for close inputs.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Move is one lease this node should move: From as the store has it, To
// the node that gets it.
type Move struct {
	From store.FleetOwner
	To   string
}

// Plan says what node self does now, given every fleet's lease and the
// nodes: it takes the fleets that should be its own whose holder is dead,
// gone or absent (all of them: those fleets have no owner), and hands to
// their rightful owner up to maxHandoffs of the fleets it holds that
// should be another live node's (a node joining takes its share over a
// few ticks). A draining node hands off everything, maxHandoffs at a
// time, and takes nothing. Leases of fleets that no longer exist are
// returned in drop, for their holder (or anyone, when it is dead) to
// remove.
func Plan(self string, leases []store.FleetOwner, nodes []*store.Node, maxHandoffs int) (moves []Move, drop []string) {
	alive := map[string]bool{}
	var candidates []string
	for _, n := range nodes {
		if !n.Alive {
			continue
		}
		alive[n.ID] = true
		if !n.Draining && n.OwnsFleets {
			candidates = append(candidates, n.ID)
		}
	}
	sort.Strings(candidates)
	var handoffs []Move
	for _, l := range leases {
		if l.Gone {
			if l.NodeID == self || !alive[l.NodeID] {
				drop = append(drop, l.FleetID)
			}
			continue
		}
		want := Owner(l.FleetID, candidates)
		switch {
		case want == "":
			continue
		case l.NodeID == self:
			if want != self {
				handoffs = append(handoffs, Move{From: l, To: want})
			}
		case want == self && (l.NodeID == "" || !alive[l.NodeID]):
			moves = append(moves, Move{From: l, To: self})
		}
	}
	if len(handoffs) > maxHandoffs {
		handoffs = handoffs[:maxHandoffs]
	}
	return append(moves, handoffs...), drop
}
