package owners

import (
	"fmt"
	"testing"

	"github.com/anylift/anylift/internal/store"
)

func nodes(ids ...string) []*store.Node {
	var out []*store.Node
	for _, id := range ids {
		out = append(out, &store.Node{ID: id, Alive: true, OwnsFleets: true})
	}
	return out
}

func fleets(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("fleet-%04d", i))
	}
	return out
}

// apply runs every node's plan on the same leases until nothing moves,
// and returns the leases and how many moves each round made.
func apply(t *testing.T, leases map[string]store.FleetOwner, ns []*store.Node, max int) []int {
	t.Helper()
	var rounds []int
	for range 1000 {
		moved := 0
		for _, n := range ns {
			if !n.Alive {
				continue
			}
			var list []store.FleetOwner
			for _, l := range leases {
				list = append(list, l)
			}
			moves, _ := Plan(n.ID, list, ns, max)
			for _, m := range moves {
				cur := leases[m.From.FleetID]
				if cur != m.From {
					t.Fatalf("node %s moves %+v, but the lease is %+v", n.ID, m.From, cur)
				}
				if m.From.NodeID != n.ID && m.To != n.ID {
					t.Fatalf("node %s moves a lease that is neither its own nor for itself: %+v", n.ID, m)
				}
				leases[m.From.FleetID] = store.FleetOwner{FleetID: cur.FleetID, NodeID: m.To, Epoch: cur.Epoch + 1}
				moved++
			}
		}
		if moved == 0 {
			return rounds
		}
		rounds = append(rounds, moved)
	}
	t.Fatal("the plans never settle")
	return nil
}

func TestPlanSpreadsAndMovesGently(t *testing.T) {
	const max = 4
	ns := nodes("a", "b", "c")
	leases := map[string]store.FleetOwner{}
	for _, f := range fleets(300) {
		leases[f] = store.FleetOwner{FleetID: f} // no owner yet
	}
	apply(t, leases, ns, max)
	count := map[string]int{}
	for _, l := range leases {
		if want := Owner(l.FleetID, []string{"a", "b", "c"}); l.NodeID != want {
			t.Fatalf("%s owned by %s, want %s", l.FleetID, l.NodeID, want)
		}
		count[l.NodeID]++
	}
	for _, id := range []string{"a", "b", "c"} {
		if count[id] < 70 || count[id] > 130 {
			t.Fatalf("uneven spread over three nodes: %v", count)
		}
	}

	// A fourth node joins: only the fleets it wins move, each from its
	// owner, at most max per owner and round.
	before := map[string]store.FleetOwner{}
	for k, v := range leases {
		before[k] = v
	}
	ns = append(ns, nodes("d")...)
	rounds := apply(t, leases, ns, max)
	for _, r := range rounds {
		if r > 3*max {
			t.Fatalf("a round moved %d fleets; at most %d per old node", r, max)
		}
	}
	movedFleets := 0
	for k, l := range leases {
		if l != before[k] {
			movedFleets++
			if l.NodeID != "d" || l.Epoch != before[k].Epoch+1 {
				t.Fatalf("%s moved from %+v to %+v; only moves to the new node", k, before[k], l)
			}
		}
	}
	if movedFleets < 40 || movedFleets > 110 {
		t.Fatalf("%d of 300 fleets moved to the fourth node; about a quarter should", movedFleets)
	}

	// b dies: its fleets go to the nodes that win them without it, at
	// once; the others stay.
	ns[1].Alive = false
	before = map[string]store.FleetOwner{}
	for k, v := range leases {
		before[k] = v
	}
	apply(t, leases, ns, max)
	for k, l := range leases {
		if before[k].NodeID != "b" && l != before[k] {
			t.Fatalf("%s moved from live node %s", k, before[k].NodeID)
		}
		if l.NodeID == "b" {
			t.Fatalf("%s still on the dead node", k)
		}
	}

	// c drains: it hands everything away and takes nothing.
	ns[2].Draining = true
	apply(t, leases, ns, max)
	for k, l := range leases {
		if l.NodeID == "c" {
			t.Fatalf("%s still on the draining node", k)
		}
	}
}

func TestOnNeedsEveryLiveNode(t *testing.T) {
	ns := nodes("a", "b")
	if !On(ns) {
		t.Fatal("two nodes that own fleets: on")
	}
	ns = append(ns, &store.Node{ID: "old", Alive: true})
	if On(ns) {
		t.Fatal("a live node of an older version turns ownership off")
	}
	ns[2].Alive = false
	if !On(ns) {
		t.Fatal("a dead node of an older version does not count")
	}
	if On(nil) {
		t.Fatal("no node: off")
	}
}

func TestPlanDropsGoneFleets(t *testing.T) {
	ns := nodes("a")
	ns = append(ns, &store.Node{ID: "dead", OwnsFleets: true})
	leases := []store.FleetOwner{{FleetID: "f1", NodeID: "a", Epoch: 3, Gone: true}, {FleetID: "f2", NodeID: "dead", Epoch: 1, Gone: true},
		{FleetID: "f3", NodeID: "b", Epoch: 1, Gone: true}}
	_, drop := Plan("a", leases, append(ns, &store.Node{ID: "b", Alive: true, OwnsFleets: true}), 4)
	if len(drop) != 2 || drop[0] != "f1" || drop[1] != "f2" {
		t.Fatalf("drop %v, want f1 (its own) and f2 (a dead node's)", drop)
	}
}
