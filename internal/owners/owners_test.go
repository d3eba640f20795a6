package owners

import (
	"slices"
	"testing"

	"github.com/anylift/anylift/internal/store"
)

func TestMapHearsGainsAndLosses(t *testing.T) {
	m := New("a")
	var gained, lost []string
	m.OnGain(func(id string, epoch int64) { gained = append(gained, id) })
	m.OnLose(func(id string) { lost = append(lost, id) })
	ns := []*store.Node{{ID: "a", Alive: true, OwnsFleets: true, Address: "http://a"}, {ID: "b", Alive: true, OwnsFleets: true, Address: "http://b"}}

	m.Refresh([]store.FleetOwner{{FleetID: "f1", NodeID: "a", Epoch: 1}, {FleetID: "f2", NodeID: "b", Epoch: 1}}, ns, true)
	if !slices.Equal(gained, []string{"f1"}) || len(lost) != 0 {
		t.Fatalf("gained %v lost %v", gained, lost)
	}
	if base, local := m.Route("f2"); local || base != "http://b" {
		t.Fatalf("f2 routes to %q local %v", base, local)
	}
	if _, local := m.Route("f1"); !local {
		t.Fatal("f1 is local")
	}
	// The same reading again changes nothing; an older one is ignored.
	m.Refresh([]store.FleetOwner{{FleetID: "f1", NodeID: "a", Epoch: 1}, {FleetID: "f2", NodeID: "b", Epoch: 1}}, ns, true)
	m.Moved(store.FleetOwner{FleetID: "f1", NodeID: "b", Epoch: 2})
	m.Refresh([]store.FleetOwner{{FleetID: "f1", NodeID: "a", Epoch: 1}, {FleetID: "f2", NodeID: "b", Epoch: 1}}, ns, true)
	if !slices.Equal(gained, []string{"f1"}) || !slices.Equal(lost, []string{"f1"}) {
		t.Fatalf("after handing f1 over: gained %v lost %v", gained, lost)
	}
	if m.Owns("f1") {
		t.Fatal("f1 was handed over")
	}
	// A fleet this node just created that a refresh does not list yet is
	// kept once, and forgotten the second time.
	m.Adopt("f3", 1)
	m.Refresh(nil, ns, true)
	if !m.Owns("f3") || len(lost) != 1 {
		t.Fatalf("f3 dropped at the first refresh that missed it: lost %v", lost)
	}
	m.Refresh(nil, ns, true)
	if m.Owns("f3") || !slices.Equal(lost, []string{"f1", "f3"}) {
		t.Fatalf("f3 kept after two refreshes without it: lost %v", lost)
	}
	// Ownership off: every fleet is served here.
	m.Refresh([]store.FleetOwner{{FleetID: "f2", NodeID: "b", Epoch: 1}}, ns, false)
	if _, local := m.Route("f2"); !local || m.Fencing() {
		t.Fatal("with ownership off every call is served here, unfenced")
	}
}
