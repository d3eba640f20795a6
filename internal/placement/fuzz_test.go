package placement

import (
	"slices"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
)

// FuzzRank checks Rank's contract on arbitrary latencies, policies and
// orders: it never panics, returns only candidates it was given, each at
// most once, never one outside AllowedLocations, never one over the
// latency cap in force, and with NONE never one outside the override.
func FuzzRank(f *testing.F) {
	f.Add(int64(5), uint8(3), float64(40), float64(90), uint16(50), uint16(10), "LOCATION", "loc-b", true, false)
	f.Add(int64(0), uint8(0), float64(0), float64(-1), uint16(0), uint16(0), "COST", "", false, true)
	f.Fuzz(func(t *testing.T, elapsed int64, n uint8, l1, l2 float64, capMs, dur uint16, crit, loc string, allow, none bool) {
		locs := []string{"loc-a", "loc-b", "loc-c", loc}
		var cands []Candidate
		for i := range int(n % 8) {
			cands = append(cands, Candidate{FleetID: string(rune('A' + i%3)), Location: locs[i%len(locs)], Destination: i % 3, Cost: float64(i % 2), Free: i % 2})
		}
		r := Request{
			Latencies:     []game.PlayerLatency{{PlayerID: "p", Location: "loc-a", LatencyMs: l1}, {PlayerID: "q", Location: loc, LatencyMs: l2}},
			Policies:      []game.LatencyPolicy{{MaxLatencyMs: int(capMs), DurationSeconds: int(dur)}},
			PriorityOrder: []string{crit}, LocationOrder: []string{loc, "loc-c"}, Start: t0,
		}
		if allow {
			r.AllowedLocations = []string{"loc-a", loc}
		}
		if none {
			r.Override = &game.PriorityOverride{LocationOrder: []string{loc}, Fallback: game.FallbackNone}
		}
		now := t0.Add(time.Duration(elapsed%1e6) * time.Millisecond)
		got := Rank(cands, r, now)
		capNow, capped := LatencyCap(r.Policies, now.Sub(t0))
		seen := map[Candidate]int{}
		for _, c := range cands {
			seen[c]++
		}
		for _, c := range got {
			if seen[c] == 0 {
				t.Fatalf("Rank returned %+v more often than given", c)
			}
			seen[c]--
			if allow && !slices.Contains(r.AllowedLocations, c.Location) {
				t.Fatalf("%+v is outside AllowedLocations", c)
			}
			if none && c.Location != loc {
				t.Fatalf("%+v is outside the override", c)
			}
			for _, l := range r.Latencies {
				if capped && l.Location == c.Location && l.LatencyMs > float64(capNow) {
					t.Fatalf("%+v is over the %d ms cap", c, capNow)
				}
			}
		}
	})
}
