package placement

import (
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestLatencyCap(t *testing.T) {
	// GameLift's example: 50 ms for 120 s, 100 ms for 120 s, 200 ms until
	// the timeout; given out of order on purpose.
	policies := []game.LatencyPolicy{{MaxLatencyMs: 200}, {MaxLatencyMs: 100, DurationSeconds: 120}, {MaxLatencyMs: 50, DurationSeconds: 120}}
	for _, tc := range []struct {
		policies []game.LatencyPolicy
		elapsed  time.Duration
		cap      int
		ok       bool
	}{
		{policies, 0, 50, true},
		{policies, 119 * time.Second, 50, true},
		{policies, 120 * time.Second, 100, true},
		{policies, 239 * time.Second, 100, true},
		{policies, 240 * time.Second, 200, true},
		{policies, time.Hour, 200, true},
		{[]game.LatencyPolicy{{MaxLatencyMs: 50, DurationSeconds: 10}}, 9 * time.Second, 50, true},
		{[]game.LatencyPolicy{{MaxLatencyMs: 50, DurationSeconds: 10}}, 10 * time.Second, 0, false},
		{nil, 0, 0, false},
	} {
		capMs, ok := LatencyCap(tc.policies, tc.elapsed)
		if capMs != tc.cap || ok != tc.ok {
			t.Errorf("LatencyCap(%v, %v) = %d %v, want %d %v", tc.policies, tc.elapsed, capMs, ok, tc.cap, tc.ok)
		}
	}
}

func names(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.FleetID+"/"+c.Location)
	}
	return out
}

func TestRank(t *testing.T) {
	// Two fleets: A (destination 0) in loc-b and loc-c, costly; B
	// (destination 1) in loc-a and loc-c, cheap.
	cands := []Candidate{
		{FleetID: "A", Location: "loc-c", Destination: 0, Cost: 2, Free: 1},
		{FleetID: "A", Location: "loc-b", Destination: 0, Cost: 2, Free: 1},
		{FleetID: "B", Location: "loc-a", Destination: 1, Cost: 1, Free: 1},
		{FleetID: "B", Location: "loc-c", Destination: 1, Cost: 1, Free: 1},
	}
	lat := func(pairs ...any) []game.PlayerLatency {
		var out []game.PlayerLatency
		for i := 0; i < len(pairs); i += 3 {
			out = append(out, game.PlayerLatency{PlayerID: pairs[i].(string), Location: pairs[i+1].(string), LatencyMs: pairs[i+2].(float64)})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		req  Request
		now  time.Time
		want []string
	}{
		{"no latency data: destination order, then locations alphabetically", Request{},
			t0, []string{"A/loc-b", "A/loc-c", "B/loc-a", "B/loc-c"}},
		{"latency data: lowest average first, unreported last, then cost", Request{Latencies: lat("p1", "loc-a", 80.0, "p2", "loc-a", 20.0, "p1", "loc-c", 60.0)},
			t0, []string{"B/loc-a", "B/loc-c", "A/loc-c", "A/loc-b"}},
		{"policy drops locations over the cap; unreported stay", Request{
			Latencies: lat("p1", "loc-a", 80.0, "p2", "loc-a", 20.0, "p1", "loc-c", 60.0),
			Policies:  []game.LatencyPolicy{{MaxLatencyMs: 70, DurationSeconds: 10}}, Start: t0},
			t0.Add(5 * time.Second), []string{"B/loc-c", "A/loc-c", "A/loc-b"}},
		{"policy relaxes once expired", Request{
			Latencies: lat("p1", "loc-a", 80.0, "p2", "loc-a", 20.0, "p1", "loc-c", 60.0),
			Policies:  []game.LatencyPolicy{{MaxLatencyMs: 70, DurationSeconds: 10}}, Start: t0},
			t0.Add(10 * time.Second), []string{"B/loc-a", "B/loc-c", "A/loc-c", "A/loc-b"}},
		{"cost first", Request{PriorityOrder: []string{game.PriorityCost}},
			t0, []string{"B/loc-a", "B/loc-c", "A/loc-b", "A/loc-c"}},
		{"location order, unlisted after, alphabetical; then cost (appended)", Request{PriorityOrder: []string{game.PriorityLocation}, LocationOrder: []string{"loc-c"}},
			t0, []string{"B/loc-c", "A/loc-c", "B/loc-a", "A/loc-b"}},
		{"destination before location", Request{PriorityOrder: []string{game.PriorityDestination, game.PriorityLocation}, LocationOrder: []string{"loc-c", "loc-b"}},
			t0, []string{"A/loc-c", "A/loc-b", "B/loc-c", "B/loc-a"}},
		{"allowed locations filter", Request{AllowedLocations: []string{"loc-c"}},
			t0, []string{"A/loc-c", "B/loc-c"}},
		{"override first, then the rest", Request{PriorityOrder: []string{game.PriorityLocation},
			Override: &game.PriorityOverride{LocationOrder: []string{"loc-a", "loc-b"}, Fallback: game.FallbackDefaultAfterSinglePass}},
			t0, []string{"B/loc-a", "A/loc-b", "B/loc-c", "A/loc-c"}},
		{"override NONE: its locations only", Request{PriorityOrder: []string{game.PriorityLocation},
			Override: &game.PriorityOverride{LocationOrder: []string{"loc-b"}, Fallback: game.FallbackNone}},
			t0, []string{"A/loc-b"}},
		{"override never bypasses the filter", Request{PriorityOrder: []string{game.PriorityLocation}, AllowedLocations: []string{"loc-c"},
			Override: &game.PriorityOverride{LocationOrder: []string{"loc-a"}, Fallback: game.FallbackNone}},
			t0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(Rank(cands, tc.req, tc.now))
			if len(got) != len(tc.want) {
				t.Fatalf("Rank = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Rank = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestChooseSkipsFull(t *testing.T) {
	cands := []Candidate{
		{FleetID: "A", Location: "loc-a", Destination: 0, Free: 0},
		{FleetID: "B", Location: "loc-a", Destination: 1, Free: 3},
	}
	c, ok := Choose(cands, Request{}, t0)
	if !ok || c.FleetID != "B" {
		t.Fatalf("Choose = %+v %v, want B", c, ok)
	}
	if _, ok := Choose(cands[:1], Request{}, t0); ok {
		t.Fatal("Choose found capacity in a full fleet")
	}
}
