package matchmaking

import (
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// finder holds what one Find call derives from the rule set.
type finder struct {
	rs       *ruleset.RuleSet
	opt      Options
	deferred map[string]bool
	sorts    []*ruleset.Rule
}

func newFinder(rs *ruleset.RuleSet, opt Options) *finder {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 1000
	}
	f := &finder{rs: rs, opt: opt, deferred: map[string]bool{}}
	for _, r := range rs.Rules {
		f.deferred[r.Name] = deferred(r)
		if r.Type == ruleset.AbsoluteSort || r.Type == ruleset.DistanceSort {
			f.sorts = append(f.sorts, r)
		}
	}
	for _, r := range rs.Rules { // a compound is deferred when an operand is
		if r.Type == ruleset.Compound {
			for _, n := range r.Statement.Rules() {
				f.deferred[r.Name] = f.deferred[r.Name] || f.deferred[n]
			}
		}
	}
	return f
}

// Find proposes matches from pool at now (spec §6.2, §6.3). Each ticket
// joins at most one match; tickets that cannot be matched now are left
// out and may match on a later call, when expansions have relaxed the
// rules. Tickets that can never match (see Unmatchable) are skipped.
// Find does not modify pool.
func Find(rs *ruleset.RuleSet, pool []Ticket, now time.Time, opt Options) []Match {
	f := newFinder(rs, opt)
	entries := f.resolveAll(pool, now)
	f.presort(entries)
	var out []Match
	for start := 0; start < len(entries); start += f.opt.BatchSize {
		batch := entries[start:min(len(entries), start+f.opt.BatchSize)]
		out = append(out, f.findInBatch(batch)...)
	}
	return out
}

// Unmatchable reports whether t can never match under rs: a declared
// attribute missing without default, a party larger than every team, or no
// latency while the rule set has a latency rule. Such tickets stay in the
// pool until they time out.
func Unmatchable(rs *ruleset.RuleSet, t Ticket) bool {
	f := newFinder(rs, Options{})
	_, ok := resolve(rs, &t, t.StartTime, f.maxTeam(), f.hasLatencyRule())
	return !ok
}

func (f *finder) maxTeam() int {
	n := 0
	for _, in := range f.rs.Instances {
		n = max(n, in.MaxPlayers)
	}
	for _, x := range f.rs.Expansions {
		if x.Target.Property == "maxPlayers" {
			for _, s := range x.Steps {
				n = max(n, int(s.Value))
			}
		}
	}
	return n
}

func (f *finder) hasLatencyRule() bool {
	for _, r := range f.rs.Rules {
		if r.Type == ruleset.Latency {
			return true
		}
	}
	return false
}

func (f *finder) resolveAll(pool []Ticket, now time.Time) []*entry {
	maxTeam, lat := f.maxTeam(), f.hasLatencyRule()
	out := make([]*entry, 0, len(pool))
	for i := range pool {
		if e, ok := resolve(f.rs, &pool[i], now, maxTeam, lat); ok {
			out = append(out, e)
		}
	}
	return out
}

// presort orders the pool before batching: shuffled (random), by the sort
// attributes (sorted), or by age.
func (f *finder) presort(es []*entry) {
	byAge(es)
	switch f.rs.Algorithm.BatchingPreference {
	case "random":
		rng := rand.New(rand.NewSource(f.opt.Seed))
		rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	case "sorted":
		attrs := f.rs.Algorithm.SortByAttributes
		sort.SliceStable(es, func(i, j int) bool {
			for _, a := range attrs {
				vi, _ := ticketValue(es[i], a, "avg", "")
				vj, _ := ticketValue(es[j], a, "avg", "")
				if vi != vj {
					return vi < vj
				}
			}
			return false
		})
	}
}

func byAge(es []*entry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i].t, es[j].t
		if !a.StartTime.Equal(b.StartTime) {
			return a.StartTime.Before(b.StartTime)
		}
		return a.ID < b.ID
	})
}

// findInBatch builds matches around anchors, oldest first (backfill
// tickets first or last per backfillPriority).
func (f *finder) findInBatch(batch []*entry) []Match {
	anchors := append([]*entry(nil), batch...)
	byAge(anchors)
	if prio := f.rs.Algorithm.BackfillPriority; prio != "normal" || f.rs.Algorithm.Strategy == ruleset.Balanced {
		first := prio == "high" || f.rs.Algorithm.Strategy == ruleset.Balanced
		sort.SliceStable(anchors, func(i, j int) bool {
			bi, bj := anchors[i].t.Backfill, anchors[j].t.Backfill
			return bi != bj && bi == first
		})
	}
	used := map[*entry]bool{}
	var out []Match
	for _, a := range anchors {
		if used[a] {
			continue
		}
		c := f.build(a, f.candidates(a, anchors, used))
		if c == nil {
			continue
		}
		if f.rs.Algorithm.Strategy == ruleset.Balanced {
			f.balance(c)
		}
		for _, pl := range c.placed {
			used[pl.e] = true
		}
		out = append(out, c.match())
	}
	return out
}

// candidates returns the unused tickets other than the anchor, oldest
// first, re-ordered by the sort rules (or, for balanced, by closeness of
// the balanced attribute) relative to the anchor.
func (f *finder) candidates(anchor *entry, ordered []*entry, used map[*entry]bool) []*entry {
	out := make([]*entry, 0, len(ordered))
	near := f.batchFilter(anchor)
	for _, e := range ordered {
		if e != anchor && !used[e] && !(e.t.Backfill && anchor.t.Backfill) && near(e) {
			out = append(out, e)
		}
	}
	keys := f.sortKeys(anchor)
	if len(keys) == 0 {
		return out
	}
	k := make(map[*entry][]float64, len(out))
	for _, e := range out {
		for _, key := range keys {
			k[e] = append(k[e], key(e))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := k[out[i]], k[out[j]]
		for n := range a {
			if a[n] != b[n] {
				return a[n] < b[n]
			}
		}
		return false
	})
	return out
}

// sortKeys returns, per sort rule, a key where smaller sorts first;
// tickets without the value sort last.
func (f *finder) sortKeys(anchor *entry) []func(*entry) float64 {
	var keys []func(*entry) float64
	for _, r := range f.sorts {
		mapKey := anchorMapKey(anchor, r)
		av, aok := ticketValue(anchor, r.SortAttribute, r.PartyAggregation, mapKey)
		dir := 1.0
		if r.SortDirection == "descending" {
			dir = -1
		}
		keys = append(keys, func(e *entry) float64 {
			v, ok := ticketValue(e, r.SortAttribute, r.PartyAggregation, mapKey)
			switch {
			case !ok:
				return math.Inf(1)
			case r.Type == ruleset.DistanceSort && aok:
				return dir * math.Abs(v-av)
			case r.Type == ruleset.DistanceSort:
				return math.Inf(1)
			}
			return dir * v
		})
	}
	if f.rs.Algorithm.BatchingPreference == "fastestRegion" {
		home := fastestLocation(anchor)
		keys = append(keys, func(e *entry) float64 {
			if fastestLocation(e) == home {
				return 0
			}
			return 1
		})
	}
	if f.rs.Algorithm.Strategy == ruleset.Balanced {
		attr := f.rs.Algorithm.BalancedAttribute
		av, _ := ticketValue(anchor, attr, "avg", "")
		keys = append(keys, func(e *entry) float64 {
			v, _ := ticketValue(e, attr, "avg", "")
			return math.Abs(v - av)
		})
	}
	return keys
}

// anchorMapKey is, for a sort on a string_number_map, the anchor's key
// holding its lowest (minValue) or highest (maxValue) value.
func anchorMapKey(anchor *entry, r *ruleset.Rule) string {
	if r.MapKey == "" || len(anchor.players) == 0 {
		return ""
	}
	best, key := 0.0, ""
	for k, v := range anchor.players[0].Attrs[r.SortAttribute].SDM {
		if key == "" || r.MapKey == "minValue" && v < best || r.MapKey == "maxValue" && v > best || v == best && k < key {
			best, key = v, k
		}
	}
	return key
}

// batchFilter returns whether a ticket may join a match around anchor
// under the batchDistance rules (spec §6.2 step 4): within the rule's
// largest possible maxDistance of the anchor's value, or the same string.
// The full rule is still checked on the candidate match.
func (f *finder) batchFilter(anchor *entry) func(*entry) bool {
	var tests []func(*entry) bool
	for _, r := range f.rs.Rules {
		if r.Type != ruleset.BatchDistance {
			continue
		}
		a, _ := f.rs.Attribute(r.BatchAttribute)
		if a.Type == ruleset.TypeString {
			want := anchor.players[0].Attrs[a.Name].S
			tests = append(tests, func(e *entry) bool { return e.players[0].Attrs[a.Name].S == want })
			continue
		}
		limit := *r.MaxDistance
		for _, x := range f.rs.Expansions {
			if x.Target.Rule == r.Name && x.Target.Property == "maxDistance" {
				for _, s := range x.Steps {
					limit = math.Max(limit, s.Value)
				}
			}
		}
		av, aok := ticketValue(anchor, a.Name, r.PartyAggregation, "")
		tests = append(tests, func(e *entry) bool {
			v, ok := ticketValue(e, a.Name, r.PartyAggregation, "")
			return !ok || !aok || math.Abs(v-av) <= limit
		})
	}
	return func(e *entry) bool {
		for _, t := range tests {
			if !t(e) {
				return false
			}
		}
		return true
	}
}

// fastestLocation is the location where a ticket reports its lowest
// latency ("" without latency data).
func fastestLocation(e *entry) string {
	best, loc := math.Inf(1), ""
	for l, ms := range e.lat["avg"] {
		if ms < best || ms == best && l < loc {
			best, loc = ms, l
		}
	}
	return loc
}
