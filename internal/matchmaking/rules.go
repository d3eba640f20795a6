package matchmaking

import (
	"math"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// check evaluates the candidate against the rule set with the expanded
// values in effect. Partial checks (final false) skip deferred rules and
// the team minimums; a final check applies everything.
func (c *candidate) check(final bool) bool {
	p := c.params()
	for i, n := range c.sizes {
		if n > p.max[i] || final && n < p.min[i] {
			return false
		}
	}
	if locs, restricted := c.locations(); restricted && len(locs) == 0 {
		return false
	}
	views := c.views()
	outcome := map[string]bool{}
	for _, r := range c.f.rs.Rules {
		if r.Type == ruleset.Compound || r.Type == ruleset.AbsoluteSort || r.Type == ruleset.DistanceSort {
			continue
		}
		if !final && c.f.deferred[r.Name] {
			continue
		}
		ok := c.evalRule(r, views, p)
		if !ok && r.Enforced() {
			return false
		}
		outcome[r.Name] = ok
	}
	for _, r := range c.f.rs.Rules {
		if r.Type != ruleset.Compound || !final && c.f.deferred[r.Name] {
			continue
		}
		if !r.Statement.Eval(func(n string) bool { return outcome[n] }) {
			return false
		}
	}
	return true
}

func (c *candidate) evalRule(r *ruleset.Rule, views []ruleset.TeamView, p *params) bool {
	switch r.Type {
	case ruleset.Comparison:
		return comparison(r, views, p)
	case ruleset.Distance:
		return distance(r, views, p)
	case ruleset.Collection:
		return collection(r, views, p)
	case ruleset.Latency:
		return c.latency(r, p)
	case ruleset.BatchDistance:
		return c.batchDistance(r, p)
	}
	return true
}

// measure concatenates the scalar values of a rule's measurements.
func measure(r *ruleset.Rule, views []ruleset.TeamView) []ruleset.Val {
	var out []ruleset.Val
	for _, m := range r.Measurements {
		out = append(out, ruleset.Scalars(m.Eval(views))...)
	}
	return out
}

// references returns the reference values after expansions; empty when
// the reference is an expression with no value (the rule then passes).
func references(r *ruleset.Rule, views []ruleset.TeamView, p *params) []ruleset.Val {
	ref := r.Reference
	switch {
	case ref.Expr != nil:
		return ruleset.Scalars(ref.Expr.Eval(views))
	case ref.Number != nil:
		n, _ := p.num(r, "referenceValue", ref.Number)
		v := ruleset.Val{Kind: ruleset.Num, N: n}
		if ref.String != nil {
			v.S = *ref.String
		}
		return []ruleset.Val{v}
	case ref.String != nil:
		return []ruleset.Val{{Kind: ruleset.Str, S: *ref.String}}
	}
	out := make([]ruleset.Val, len(ref.Strings))
	for i, s := range ref.Strings {
		out[i] = ruleset.Val{Kind: ruleset.Str, S: s}
	}
	return out
}

func comparison(r *ruleset.Rule, views []ruleset.TeamView, p *params) bool {
	vals := measure(r, views)
	if r.Reference == nil {
		for i := range vals {
			for j := i + 1; j < len(vals); j++ {
				if eq := same(vals[i], vals[j]); eq != (r.Operation == "=") {
					return false
				}
			}
		}
		return true
	}
	refs := references(r, views, p)
	for _, v := range vals {
		for _, ref := range refs {
			if !compare(v, r.Operation, ref) {
				return false
			}
		}
	}
	return true
}

func same(a, b ruleset.Val) bool {
	return a.Kind == b.Kind && (a.Kind == ruleset.Num && a.N == b.N || a.Kind == ruleset.Str && a.S == b.S)
}

func compare(v ruleset.Val, op string, ref ruleset.Val) bool {
	if v.Kind == ruleset.Str {
		if ref.Kind == ruleset.Num && ref.S == "" {
			return op == "!="
		}
		switch op {
		case "=":
			return v.S == ref.S
		case "!=":
			return v.S != ref.S
		}
		return false
	}
	if ref.Kind != ruleset.Num {
		return op == "!="
	}
	switch op {
	case "<":
		return v.N < ref.N
	case "<=":
		return v.N <= ref.N
	case "=":
		return v.N == ref.N
	case "!=":
		return v.N != ref.N
	case ">":
		return v.N > ref.N
	}
	return v.N >= ref.N
}

func distance(r *ruleset.Rule, views []ruleset.TeamView, p *params) bool {
	var ms []float64
	for _, m := range r.Measurements {
		ms = append(ms, ruleset.Numbers(m.Eval(views))...)
	}
	var refs []float64
	for _, v := range references(r, views, p) {
		if v.Kind == ruleset.Num {
			refs = append(refs, v.N)
		}
	}
	lo, hasLo := p.num(r, "minDistance", r.MinDistance)
	hi, hasHi := p.num(r, "maxDistance", r.MaxDistance)
	for _, m := range ms {
		for _, ref := range refs {
			d := math.Abs(m - ref)
			if hasLo && d < lo || hasHi && d > hi {
				return false
			}
		}
	}
	return true
}

// collections splits measurement values into string collections: a list
// of scalars is one collection; a list of lists is several.
func collections(r *ruleset.Rule, views []ruleset.TeamView) [][]string {
	var out [][]string
	var walk func(v ruleset.Val)
	walk = func(v ruleset.Val) {
		switch v.Kind {
		case ruleset.Str:
			out = append(out, []string{v.S})
		case ruleset.List:
			nested := false
			for _, x := range v.L {
				nested = nested || x.Kind == ruleset.List
			}
			if !nested {
				var c []string
				for _, x := range v.L {
					if x.Kind == ruleset.Str {
						c = append(c, x.S)
					}
				}
				out = append(out, c)
				return
			}
			for _, x := range v.L {
				walk(x)
			}
		}
	}
	for _, m := range r.Measurements {
		v := m.Eval(views)
		if v.Kind == ruleset.List && !anyList(v.L) {
			for _, x := range v.L { // a list of strings: each its own collection
				walk(x)
			}
			continue
		}
		walk(v)
	}
	return out
}

func anyList(l []ruleset.Val) bool {
	for _, x := range l {
		if x.Kind == ruleset.List {
			return true
		}
	}
	return false
}

func collection(r *ruleset.Rule, views []ruleset.TeamView, p *params) bool {
	cols := collections(r, views)
	lo, hasLo := p.num(r, "minCount", r.MinCount)
	hi, hasHi := p.num(r, "maxCount", r.MaxCount)
	within := func(n int) bool { return !(hasLo && float64(n) < lo || hasHi && float64(n) > hi) }
	ref := map[string]bool{}
	if r.Reference != nil {
		for _, v := range references(r, views, p) {
			if v.Kind == ruleset.Str {
				ref[v.S] = true
			} else if v.Kind == ruleset.Num && v.S != "" {
				ref[v.S] = true
			}
		}
	}
	switch r.Operation {
	case "intersection":
		if len(cols) == 0 {
			return true
		}
		return within(intersectCount(cols))
	case "contains":
		n := 0
		for _, c := range cols {
			n += btoi(containsAny(c, ref))
		}
		return within(n)
	}
	for _, c := range cols { // reference_intersection_count
		n := 0
		seen := map[string]bool{}
		for _, s := range c {
			if ref[s] && !seen[s] {
				seen[s] = true
				n++
			}
		}
		if !within(n) {
			return false
		}
	}
	return true
}

func intersectCount(cols [][]string) int {
	count := map[string]int{}
	for _, c := range cols {
		seen := map[string]bool{}
		for _, s := range c {
			if !seen[s] {
				seen[s] = true
				count[s]++
			}
		}
	}
	n := 0
	for _, k := range count {
		n += btoi(k == len(cols))
	}
	return n
}

func containsAny(c []string, ref map[string]bool) bool {
	for _, s := range c {
		if ref[s] {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// latency passes when some location is within maxLatency for every ticket
// that reported latency and, with maxDistance, every such ticket is within
// maxDistance of the reference (min or avg) there.
func (c *candidate) latency(r *ruleset.Rule, p *params) bool {
	maxLat, _ := p.num(r, "maxLatency", r.MaxLatency)
	maxDist, hasDist := p.num(r, "maxDistance", r.MaxDistance)
	var common map[string][]float64
	started := false
	for _, pl := range c.placed {
		lat := pl.e.lat[r.PartyAggregation]
		if !pl.e.restricted {
			continue // a backfill ticket without latency imposes nothing
		}
		next := map[string][]float64{}
		for l, ms := range lat {
			if ms > maxLat {
				continue
			}
			if !started {
				next[l] = []float64{ms}
			} else if prev, ok := common[l]; ok {
				next[l] = append(prev, ms)
			}
		}
		common, started = next, true
		if len(common) == 0 {
			return false
		}
	}
	if !started || !hasDist {
		return true
	}
	for _, xs := range common {
		ref := aggregate("min", xs)
		if r.DistanceReference == "avg" {
			ref = aggregate("avg", xs)
		}
		ok := true
		for _, x := range xs {
			ok = ok && math.Abs(x-ref) <= maxDist
		}
		if ok {
			return true
		}
	}
	return false
}

// batchDistance passes when the tickets' party-aggregated values lie
// within maxDistance of each other (numbers) or are all equal (strings).
func (c *candidate) batchDistance(r *ruleset.Rule, p *params) bool {
	a, _ := c.f.rs.Attribute(r.BatchAttribute)
	if a.Type == ruleset.TypeString {
		first := ""
		for i, pl := range c.placed {
			for j, pv := range pl.e.players {
				s := pv.Attrs[a.Name].S
				if i == 0 && j == 0 {
					first = s
				} else if s != first {
					return false
				}
			}
		}
		return true
	}
	maxDist, _ := p.num(r, "maxDistance", r.MaxDistance)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pl := range c.placed {
		v, ok := ticketValue(pl.e, a.Name, r.PartyAggregation, "")
		if !ok {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi-lo <= maxDist || lo > hi
}

// ticketValue is a ticket's party-aggregated number for attr (for a
// string_number_map, the value at mapKey).
func ticketValue(e *entry, attr, agg, mapKey string) (float64, bool) {
	var xs []float64
	for _, p := range e.players {
		v := p.Attrs[attr]
		switch v.Type {
		case ruleset.TypeNumber:
			xs = append(xs, v.N)
		case ruleset.TypeStringNumberMap:
			if n, ok := v.SDM[mapKey]; ok {
				xs = append(xs, n)
			}
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return aggregate(agg, xs), true
}
