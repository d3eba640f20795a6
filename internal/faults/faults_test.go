package faults

import (
	"strings"
	"testing"
	"time"
)

func TestSpecCheck(t *testing.T) {
	fleet := Scope{FleetID: "fleet-1"}
	for _, tc := range []struct {
		name string
		spec Spec
		err  string // "" for a good spec
	}{
		{"failure with a count", Spec{Kind: PlacementFailure, Scope: fleet, Count: 1}, ""},
		{"failure in a location for a while", Spec{Kind: PlacementFailure, Scope: Scope{FleetID: "f", Location: "custom-a"}, Duration: time.Minute}, ""},
		{"delay", Spec{Kind: PlacementDelay, Scope: fleet, Count: 1, Delay: time.Second}, ""},
		{"drop now", Spec{Kind: DropConnection, Scope: fleet}, ""},
		{"drop and refuse", Spec{Kind: DropConnection, Scope: Scope{FleetID: "f", ProcessID: "p"}, Duration: time.Minute}, ""},
		{"expire one", Spec{Kind: ExpireReservations, Scope: Scope{FleetID: "f", PlayerSessionID: "psess-1"}}, ""},
		{"terminate in a session", Spec{Kind: TerminateProcess, Scope: Scope{FleetID: "f", GameSessionID: "gs"}, Count: 1}, ""},
		{"unknown kind", Spec{Kind: "METEOR", Scope: fleet, Count: 1}, "is not one of"},
		{"no fleet", Spec{Kind: PlacementFailure, Count: 1}, "FleetId is required"},
		{"negative count", Spec{Kind: PlacementFailure, Scope: fleet, Count: -1}, "must not be negative"},
		{"standing forever", Spec{Kind: MissHealthChecks, Scope: fleet}, "needs a Count or a Duration"},
		{"too long", Spec{Kind: MissHealthChecks, Scope: fleet, Duration: 25 * time.Hour}, "Duration must be between"},
		{"delay without delay", Spec{Kind: PlacementDelay, Scope: fleet, Count: 1}, "needs a Delay"},
		{"delay elsewhere", Spec{Kind: PlacementFailure, Scope: fleet, Count: 1, Delay: time.Second}, "Delay applies to"},
		{"terminate for a while", Spec{Kind: TerminateProcess, Scope: fleet, Duration: time.Minute}, "takes no Duration"},
		{"placement by process", Spec{Kind: PlacementFailure, Scope: Scope{FleetID: "f", ProcessID: "p"}, Count: 1}, "cannot be narrowed by ProcessId"},
		{"health by location", Spec{Kind: MissHealthChecks, Scope: Scope{FleetID: "f", Location: "l"}, Count: 1}, "cannot be narrowed by Location"},
		{"drop by player", Spec{Kind: DropConnection, Scope: Scope{FleetID: "f", PlayerSessionID: "ps"}}, "cannot be narrowed by PlayerSessionId"},
	} {
		err := tc.spec.Check()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestScopeMatches(t *testing.T) {
	target := Scope{FleetID: "f", Location: "l", ComputeName: "c", ProcessID: "p", GameSessionID: "g"}
	for _, tc := range []struct {
		scope Scope
		want  bool
	}{
		{Scope{FleetID: "f"}, true},
		{Scope{FleetID: "f", Location: "l", ProcessID: "p"}, true},
		{Scope{FleetID: "other"}, false},
		{Scope{FleetID: "f", ComputeName: "other"}, false},
		{Scope{FleetID: "f", PlayerSessionID: "ps"}, false}, // the target names no player session
	} {
		if got := tc.scope.Matches(target); got != tc.want {
			t.Errorf("%+v matches %v, want %v", tc.scope, got, tc.want)
		}
	}
}

func TestTakeUsesTheCountOncePerKey(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Set
	s.Add(New("a", Spec{Kind: PlacementFailure, Scope: Scope{FleetID: "f", Location: "l"}, Count: 2}, t0))
	target := Scope{FleetID: "f", Location: "l"}
	if _, _, ok := s.Take(PlacementFailure, Scope{FleetID: "f", Location: "other"}, "", t0); ok {
		t.Fatal("matched another location")
	}
	if _, _, ok := s.Take(PlacementDelay, target, "", t0); ok {
		t.Fatal("matched another kind")
	}
	f, ended, ok := s.Take(PlacementFailure, target, "k1", t0)
	if !ok || ended || f.Count != 1 || f.Fired != 1 {
		t.Fatalf("first: %+v %v %v", f, ended, ok)
	}
	if f, ended, ok = s.Take(PlacementFailure, target, "k1", t0); !ok || ended || f.Count != 1 {
		t.Fatalf("the same key again: %+v %v %v", f, ended, ok)
	}
	if f, ended, ok = s.Take(PlacementFailure, target, "k2", t0); !ok || !ended || f.Count != 0 || f.Fired != 2 {
		t.Fatalf("last: %+v %v %v", f, ended, ok)
	}
	if !s.Empty() {
		t.Fatal("a used-up fault stays")
	}
	if _, _, ok := s.Take(PlacementFailure, target, "k1", t0); ok {
		t.Fatal("a used-up fault matched")
	}
}

func TestDurationListClearExpire(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Set
	s.Add(New("timed", Spec{Kind: MissHealthChecks, Scope: Scope{FleetID: "f"}, Duration: time.Minute}, t0))
	s.Add(New("counted", Spec{Kind: PlacementFailure, Scope: Scope{FleetID: "f"}, Count: 3}, t0))
	s.Add(New("other", Spec{Kind: PlacementFailure, Scope: Scope{FleetID: "g"}, Count: 3}, t0))
	if got := s.List("f", t0); len(got) != 2 || got[0].ID != "timed" || got[1].ID != "counted" {
		t.Fatalf("list %+v", got)
	}
	if got := s.List("", t0); len(got) != 3 {
		t.Fatalf("list all %+v", got)
	}
	if _, ok := s.Get("timed", t0.Add(59*time.Second)); !ok {
		t.Fatal("not in force before its end")
	}
	if _, _, ok := s.Take(MissHealthChecks, Scope{FleetID: "f", ProcessID: "p"}, "", t0.Add(time.Minute)); ok {
		t.Fatal("in force at its end")
	}
	if got := s.Expire(t0.Add(time.Minute)); len(got) != 1 || got[0].ID != "timed" {
		t.Fatalf("expired %+v", got)
	}
	if got := s.Clear("", "g"); len(got) != 1 || got[0].ID != "other" {
		t.Fatalf("cleared by fleet %+v", got)
	}
	if got := s.Clear("counted", ""); len(got) != 1 || !s.Empty() {
		t.Fatalf("cleared by id %+v", got)
	}
}

// FuzzSpecCheck: any spec is accepted or refused with a reason; an
// accepted one names a fleet and a known kind.
func FuzzSpecCheck(f *testing.F) {
	f.Add("PLACEMENT_FAILURE", "fleet-1", "custom-a", "", "", 1, int64(0), int64(0))
	f.Add("PLACEMENT_DELAY", "fleet-1", "", "", "", 0, int64(time.Minute), int64(time.Second))
	f.Add("DROP_CONNECTION", "f", "", "host", "p", 0, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, kind, fleet, location, compute, pid string, count int, duration, delay int64) {
		s := Spec{Kind: kind, Scope: Scope{FleetID: fleet, Location: location, ComputeName: compute, ProcessID: pid},
			Count: count, Duration: time.Duration(duration), Delay: time.Duration(delay)}
		if err := s.Check(); err == nil && (fleet == "" || Narrowers(kind) == nil || count < 0) {
			t.Fatalf("accepted %+v", s)
		}
	})
}
