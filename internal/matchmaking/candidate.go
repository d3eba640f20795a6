package matchmaking

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// entry is a pool ticket resolved against the rule set.
type entry struct {
	t       *Ticket
	players []ruleset.PlayerView
	age     float64 // seconds since StartTime
	// lat maps a partyAggregation (min/max/avg) to the ticket's latency per
	// location, over the locations every player reported. Empty: the
	// ticket imposes no location restriction.
	lat map[string]map[string]float64
	// restricted is set when any player reported latency: the ticket then
	// accepts only the locations in lat (possibly none).
	restricted bool
}

func (e *entry) size() int { return len(e.players) }

// resolve prepares t for matching; ok is false when it can never match
// (spec §5.1 item 5): a declared attribute missing without default, a party
// larger than every team, no latency under a latency rule.
func resolve(rs *ruleset.RuleSet, t *Ticket, now time.Time, maxTeam int, latencyRule bool) (*entry, bool) {
	e := &entry{t: t, age: now.Sub(t.StartTime).Seconds()}
	if len(t.Players) == 0 || !t.Backfill && len(t.Players) > maxTeam {
		return nil, false
	}
	for _, p := range t.Players {
		attrs, ok := rs.PlayerAttributes(p.Attributes)
		if !ok {
			return nil, false
		}
		if t.Backfill && len(rs.InstancesOf(p.Team)) != 1 {
			return nil, false
		}
		if latencyRule && !t.Backfill && len(p.LatencyMs) == 0 {
			return nil, false
		}
		e.players = append(e.players, ruleset.PlayerView{ID: p.ID, Attrs: attrs})
	}
	e.lat = ticketLatency(t.Players)
	for _, p := range t.Players {
		e.restricted = e.restricted || len(p.LatencyMs) > 0
	}
	if latencyRule && !t.Backfill && len(e.lat["avg"]) == 0 {
		return nil, false // the party shares no location
	}
	return e, true
}

// ticketLatency aggregates the players' latencies per location reported by
// every player.
func ticketLatency(ps []Player) map[string]map[string]float64 {
	out := map[string]map[string]float64{"min": {}, "max": {}, "avg": {}}
	for loc := range ps[0].LatencyMs {
		var xs []float64
		for _, p := range ps {
			if ms, ok := p.LatencyMs[loc]; ok {
				xs = append(xs, float64(ms))
			}
		}
		if len(xs) != len(ps) {
			continue
		}
		for agg := range out {
			out[agg][loc] = aggregate(agg, xs)
		}
	}
	return out
}

func aggregate(agg string, xs []float64) float64 {
	r := xs[0]
	switch agg {
	case "min":
		for _, x := range xs {
			r = math.Min(r, x)
		}
	case "max":
		for _, x := range xs {
			r = math.Max(r, x)
		}
	default:
		r = 0
		for _, x := range xs {
			r += x
		}
		r /= float64(len(xs))
	}
	return r
}

// placement is a ticket in a candidate and its team instance (-1: a
// backfill ticket, whose players sit on their own teams).
type placement struct {
	e    *entry
	team int
}

// candidate is a match being built.
type candidate struct {
	f      *finder
	placed []placement
	sizes  []int // players per team instance
	nPlay  int
	hasBF  bool
}

func (f *finder) newCandidate() *candidate {
	return &candidate{f: f, sizes: make([]int, len(f.rs.Instances))}
}

func (c *candidate) add(e *entry, team int) {
	c.placed = append(c.placed, placement{e, team})
	c.nPlay += e.size()
	if team >= 0 {
		c.sizes[team] += e.size()
		return
	}
	c.hasBF = true
	for _, p := range e.t.Players {
		c.sizes[c.f.rs.InstancesOf(p.Team)[0]]++
	}
}

func (c *candidate) removeLast() {
	last := c.placed[len(c.placed)-1]
	c.placed = c.placed[:len(c.placed)-1]
	c.nPlay -= last.e.size()
	if last.team >= 0 {
		c.sizes[last.team] -= last.e.size()
		return
	}
	c.hasBF = false
	for _, p := range last.e.t.Players {
		c.sizes[c.f.rs.InstancesOf(p.Team)[0]]--
	}
}

// views returns the teams as the rule language sees them.
func (c *candidate) views() []ruleset.TeamView {
	v := make([]ruleset.TeamView, len(c.f.rs.Instances))
	for i, in := range c.f.rs.Instances {
		v[i] = ruleset.TeamView{Name: in.Name, Base: in.Base}
	}
	for _, pl := range c.placed {
		for i, p := range pl.e.players {
			team := pl.team
			if team < 0 {
				team = c.f.rs.InstancesOf(pl.e.t.Players[i].Team)[0]
			}
			v[team].Players = append(v[team].Players, p)
		}
	}
	return v
}

// age is the age that drives expansions: the newest ticket's (youngest)
// or, with expansionAgeSelection "oldest", the oldest's.
func (c *candidate) age() float64 {
	oldest := c.f.rs.Algorithm.ExpansionAgeSelection == "oldest"
	a := c.placed[0].e.age
	for _, p := range c.placed[1:] {
		if oldest == (p.e.age > a) {
			a = p.e.age
		}
	}
	return a
}

// params are the rule and team values in effect after expansions.
type params struct {
	rule     map[string]map[string]float64
	min, max []int
}

func (c *candidate) params() *params {
	rs := c.f.rs
	p := &params{rule: map[string]map[string]float64{}}
	for _, in := range rs.Instances {
		p.min = append(p.min, in.MinPlayers)
		p.max = append(p.max, in.MaxPlayers)
	}
	if len(c.placed) == 0 {
		return p
	}
	age := c.age()
	for i := range rs.Expansions {
		x := &rs.Expansions[i]
		v, ok := x.ValueAt(age)
		if !ok {
			continue
		}
		if x.Target.Rule != "" {
			if p.rule[x.Target.Rule] == nil {
				p.rule[x.Target.Rule] = map[string]float64{}
			}
			p.rule[x.Target.Rule][x.Target.Property] = v
			continue
		}
		for _, t := range rs.InstancesOf(x.Target.Team) {
			n := int(math.Round(v))
			if x.Target.Property == "minPlayers" {
				p.min[t] = max(0, min(n, p.max[t]))
			} else {
				p.max[t] = max(1, n)
				p.min[t] = min(p.min[t], p.max[t])
			}
		}
	}
	return p
}

// num returns a rule's numeric property after expansions.
func (p *params) num(r *ruleset.Rule, prop string, base *float64) (float64, bool) {
	if v, ok := p.rule[r.Name][prop]; ok {
		return v, true
	}
	if base == nil {
		return 0, false
	}
	return *base, true
}

func (p *params) capacity() int {
	n := 0
	for _, m := range p.max {
		n += m
	}
	return n
}

// deferred reports whether a rule's outcome can still turn in a growing
// match's favour, so it is checked only on completion (spec §6.2 step 8).
func deferred(r *ruleset.Rule) bool {
	if r.Type == ruleset.Collection && r.MinCount != nil {
		return true
	}
	if r.Type != ruleset.Comparison && r.Type != ruleset.Distance {
		return false
	}
	for _, m := range r.Measurements {
		if strings.Contains(m.Text, "count(") {
			return true
		}
	}
	return r.Reference != nil && r.Reference.Expr != nil && strings.Contains(r.Reference.Expr.Text, "count(")
}

// locations returns the locations acceptable to every ticket of the
// candidate, best first, and whether the candidate is restricted at all.
func (c *candidate) locations() ([]string, bool) {
	var common map[string]float64 // location → worst latency so far
	restricted := false
	ok := c.latencyFilter()
	for _, pl := range c.placed {
		lat := pl.e.lat["avg"]
		if !pl.e.restricted {
			continue
		}
		if !restricted {
			restricted, common = true, map[string]float64{}
			for l, ms := range lat {
				if ok(pl.e, l) {
					common[l] = ms
				}
			}
			continue
		}
		for l := range common {
			if !ok(pl.e, l) {
				delete(common, l)
			}
		}
		for l := range common {
			ms, ok := lat[l]
			if !ok {
				delete(common, l)
			} else if ms > common[l] {
				common[l] = ms
			}
		}
	}
	out := make([]string, 0, len(common))
	for l := range common {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if common[out[i]] != common[out[j]] {
			return common[out[i]] < common[out[j]]
		}
		return out[i] < out[j]
	})
	return out, restricted
}

// latencyFilter returns whether a location is acceptable to a ticket under
// every latency rule's (expanded) maxLatency.
func (c *candidate) latencyFilter() func(e *entry, loc string) bool {
	var rules []*ruleset.Rule
	for _, r := range c.f.rs.Rules {
		if r.Type == ruleset.Latency {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return func(*entry, string) bool { return true }
	}
	p := c.params()
	return func(e *entry, loc string) bool {
		for _, r := range rules {
			maxLat, _ := p.num(r, "maxLatency", r.MaxLatency)
			if ms, ok := e.lat[r.PartyAggregation][loc]; ok && ms > maxLat {
				return false
			}
		}
		return true
	}
}
