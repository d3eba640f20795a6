package matchmaking

import (
	"math"
	"sort"
)

// build grows a match around anchor from cands (spec §6.2 steps 6–10):
// each candidate is tried on the teams in fill order and kept when the
// partial check passes; scanning stops when the match is full. A match
// that is not full is complete when every team reaches its minimum and the
// final check passes; otherwise the most recently added tickets are
// dropped one by one until it is, or nothing but the anchor is left.
func (f *finder) build(anchor *entry, cands []*entry) *candidate {
	c := f.newCandidate()
	if anchor.t.Backfill {
		c.add(anchor, -1)
		if !c.check(false) {
			return nil
		}
	} else if !c.tryAdd(anchor) {
		return nil
	}
	for _, e := range cands {
		if c.nPlay >= c.target() {
			break
		}
		if e.t.Backfill && c.hasBF || c.nPlay+e.size() > c.target() {
			continue
		}
		c.tryAdd(e)
	}
	for {
		if c.complete() {
			return c
		}
		if len(c.placed) <= 1 {
			return nil
		}
		c.removeLast()
	}
}

// target is how many players the match may hold: the (expanded) capacity,
// less AdditionalPlayerCount for a new match.
func (c *candidate) target() int {
	n := c.params().capacity()
	if !c.hasBF {
		n -= c.f.opt.AdditionalPlayerCount
	}
	return n
}

func (c *candidate) complete() bool {
	if c.hasBF && len(c.placed) < 2 {
		return false // a backfill ticket must gain a ticket
	}
	return c.nPlay <= c.target() && c.check(true)
}

// tryAdd places e on the first team, in fill order, under which the
// partial check passes.
func (c *candidate) tryAdd(e *entry) bool {
	if e.t.Backfill {
		c.add(e, -1)
		if c.check(false) {
			return true
		}
		c.removeLast()
		return false
	}
	for _, t := range c.fillOrder(e.size()) {
		c.add(e, t)
		if c.check(false) {
			return true
		}
		c.removeLast()
	}
	return false
}

// fillOrder lists the teams with room for n players: teams below their
// minimum first, then those with the most open slots, ties in team order
// (spec §4.10).
func (c *candidate) fillOrder(n int) []int {
	p := c.params()
	var out []int
	for i := range c.sizes {
		if p.max[i]-c.sizes[i] >= n {
			out = append(out, i)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		i, j := out[a], out[b]
		bi, bj := c.sizes[i] < p.min[i], c.sizes[j] < p.min[j]
		if bi != bj {
			return bi
		}
		return p.max[i]-c.sizes[i] > p.max[j]-c.sizes[j]
	})
	return out
}

// balance swaps equal-sized tickets between the teams with the highest
// and lowest average balancedAttribute while that narrows the spread and
// the match still passes (spec §6.3 step 5).
func (f *finder) balance(c *candidate) {
	attr := f.rs.Algorithm.BalancedAttribute
	for round := 0; round < 50; round++ {
		avgs := c.teamAverages(attr)
		hi, lo := -1, -1
		for t, a := range avgs {
			if math.IsNaN(a) {
				continue
			}
			if hi < 0 || a > avgs[hi] {
				hi = t
			}
			if lo < 0 || a < avgs[lo] {
				lo = t
			}
		}
		if hi < 0 || hi == lo || !c.swapOnce(attr, hi, lo, avgs[hi]-avgs[lo]) {
			return
		}
	}
}

// swapOnce makes the best swap between teams hi and lo that lowers their
// gap below gap; false when none does.
func (c *candidate) swapOnce(attr string, hi, lo int, gap float64) bool {
	best, bi, bj := gap, -1, -1
	for i := range c.placed {
		for j := range c.placed {
			a, b := &c.placed[i], &c.placed[j]
			if a.team != hi || b.team != lo || a.e.size() != b.e.size() {
				continue
			}
			a.team, b.team = lo, hi
			avgs := c.teamAverages(attr)
			if g := math.Abs(avgs[hi] - avgs[lo]); g < best-1e-9 && c.check(true) {
				best, bi, bj = g, i, j
			}
			a.team, b.team = hi, lo
		}
	}
	if bi < 0 {
		return false
	}
	c.placed[bi].team, c.placed[bj].team = lo, hi
	return true
}

// teamAverages returns each team's average of attr (NaN when empty).
func (c *candidate) teamAverages(attr string) []float64 {
	sum := make([]float64, len(c.sizes))
	n := make([]int, len(c.sizes))
	for _, pl := range c.placed {
		if pl.team < 0 {
			continue
		}
		for _, p := range pl.e.players {
			sum[pl.team] += p.Attrs[attr].N
			n[pl.team]++
		}
	}
	for i := range sum {
		sum[i] /= float64(n[i])
	}
	return sum
}

func (c *candidate) match() Match {
	m := Match{}
	for _, pl := range c.placed {
		team := ""
		if pl.team >= 0 {
			team = c.f.rs.Instances[pl.team].Name
		}
		m.Tickets = append(m.Tickets, Placed{TicketID: pl.e.t.ID, Team: team})
	}
	if locs, restricted := c.locations(); restricted {
		m.Locations = locs
	}
	return m
}
