// Package placement decides where a game session placement goes: a pure
// function of a snapshot of candidate (fleet, location) pairs, the
// request and the current time. It reads and
// writes nothing; control's committer applies the decision against fresh
// state and tries the next candidate when a claim fails.
package placement

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/game"
)

// Candidate is one (fleet, location) pair a queue can place into.
type Candidate struct {
	FleetID  string
	Location string
	// Destination is the index of the queue destination it came from.
	Destination int
	// Cost is the fleet's hourly cost (an Anywhere fleet's
	// AnywhereConfiguration.Cost); 0 when unknown.
	Cost float64
	// Free is the number of processes free to host a session in the
	// snapshot; negative when not counted (the committer counts lazily).
	Free int
}

// Request is what the placement asks and what its queue imposes.
type Request struct {
	Latencies        []game.PlayerLatency
	Policies         []game.LatencyPolicy
	PriorityOrder    []string
	LocationOrder    []string
	AllowedLocations []string
	Override         *game.PriorityOverride
	// Start is when the placement started: latency policies run from it.
	Start time.Time
}

// defaultOrder is the order of criteria a queue without a
// PriorityConfiguration uses, and the order missing criteria are appended
// in.
var defaultOrder = []string{game.PriorityLatency, game.PriorityCost, game.PriorityDestination, game.PriorityLocation}

// LatencyCap is the latency limit in force after elapsed: policies apply in
// order of increasing limit, each for its duration, one without a duration
// until the end; ok is false when none is in force (no policies, or all
// expired).
func LatencyCap(policies []game.LatencyPolicy, elapsed time.Duration) (capMs int, ok bool) {
	sorted := slices.Clone(policies)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].MaxLatencyMs < sorted[j].MaxLatencyMs })
	var until time.Duration
	for _, p := range sorted {
		if p.DurationSeconds <= 0 {
			return p.MaxLatencyMs, true
		}
		until += time.Duration(p.DurationSeconds) * time.Second
		if elapsed < until {
			return p.MaxLatencyMs, true
		}
	}
	return 0, false
}

// latencyStats summarises reported latencies per location.
type latencyStats struct {
	max, sum float64
	n        int
}

func stats(latencies []game.PlayerLatency) map[string]*latencyStats {
	m := map[string]*latencyStats{}
	for _, l := range latencies {
		s := m[l.Location]
		if s == nil {
			s = &latencyStats{}
			m[l.Location] = s
		}
		s.max = math.Max(s.max, l.LatencyMs)
		s.sum += l.LatencyMs
		s.n++
	}
	return m
}

// Rank returns the candidates the request may use at now, in the order to
// try them. It drops candidates outside AllowedLocations and, while a
// latency policy is in force, locations where any player reported a
// latency above its cap (locations nobody reported stay, after the
// reported ones). With an override, its locations come first in its
// order; the rest follow only with DEFAULT_AFTER_SINGLE_PASS. Candidates
// without free processes are kept: the caller skips them.
func Rank(cands []Candidate, r Request, now time.Time) []Candidate {
	lat := stats(r.Latencies)
	capMs, capped := LatencyCap(r.Policies, now.Sub(r.Start))
	var out []Candidate
	for _, c := range cands {
		if len(r.AllowedLocations) > 0 && !slices.Contains(r.AllowedLocations, c.Location) {
			continue
		}
		if s := lat[c.Location]; capped && s != nil && s.max > float64(capMs) {
			continue
		}
		out = append(out, c)
	}
	less := comparer(criteria(r), lat, r.LocationOrder)
	slices.SortStableFunc(out, less)
	if r.Override != nil {
		out = overrideOrder(out, r.Override)
	}
	return out
}

// Choose is the first ranked candidate with a free process; ok is false
// when there is none.
func Choose(cands []Candidate, r Request, now time.Time) (Candidate, bool) {
	for _, c := range Rank(cands, r, now) {
		if c.Free > 0 {
			return c, true
		}
	}
	return Candidate{}, false
}

// criteria is the sort order: the queue's PriorityOrder with the missing
// criteria appended in default order; without a PriorityOrder and without
// latency data, destination order then location.
func criteria(r Request) []string {
	if len(r.PriorityOrder) == 0 && len(r.Latencies) == 0 {
		return []string{game.PriorityDestination, game.PriorityLocation}
	}
	out := slices.Clone(r.PriorityOrder)
	for _, c := range defaultOrder {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// comparer compares candidates lexicographically by the criteria.
func comparer(order []string, lat map[string]*latencyStats, locationOrder []string) func(a, b Candidate) int {
	avg := func(c Candidate) float64 {
		if s := lat[c.Location]; s != nil {
			return s.sum / float64(s.n)
		}
		return math.Inf(1) // unreported: after every reported location
	}
	rank := func(loc string) int {
		if i := slices.Index(locationOrder, loc); i >= 0 {
			return i
		}
		return len(locationOrder)
	}
	return func(a, b Candidate) int {
		for _, c := range order {
			var d int
			switch c {
			case game.PriorityLatency:
				d = cmpFloat(avg(a), avg(b))
			case game.PriorityCost:
				d = cmpFloat(a.Cost, b.Cost)
			case game.PriorityDestination:
				d = a.Destination - b.Destination
			case game.PriorityLocation:
				if d = rank(a.Location) - rank(b.Location); d == 0 {
					d = strings.Compare(a.Location, b.Location)
				}
			}
			if d != 0 {
				return d
			}
		}
		return 0
	}
}

// overrideOrder puts the override's locations first, in its order, each
// keeping the queue's order among its candidates; the others follow
// unless the fallback is NONE.
func overrideOrder(ranked []Candidate, o *game.PriorityOverride) []Candidate {
	var out []Candidate
	for _, loc := range o.LocationOrder {
		for _, c := range ranked {
			if c.Location == loc {
				out = append(out, c)
			}
		}
	}
	if o.Fallback == game.FallbackNone {
		return out
	}
	for _, c := range ranked {
		if !slices.Contains(o.LocationOrder, c.Location) {
			out = append(out, c)
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
