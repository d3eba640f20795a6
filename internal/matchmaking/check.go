package matchmaking

import (
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// Check verifies a proposed match against rs at now, independently of how
// it was found: every ticket of m is in pool and appears once; each party
// is whole on one team instance (a backfill ticket's players on their own
// teams, its Team left empty); team sizes are within the expanded bounds;
// every enforced rule, compound statement and location constraint holds;
// a backfill ticket gained at least one ticket. Acceptance and backfill can
// use it to re-validate a match before committing it.
func Check(rs *ruleset.RuleSet, pool []Ticket, m Match, now time.Time, opt Options) error {
	f := newFinder(rs, opt)
	byID := map[string]*Ticket{}
	for i := range pool {
		byID[pool[i].ID] = &pool[i]
	}
	if len(m.Tickets) == 0 {
		return fmt.Errorf("match has no tickets")
	}
	c := f.newCandidate()
	seen := map[string]bool{}
	for _, pl := range m.Tickets {
		t, ok := byID[pl.TicketID]
		if !ok || seen[pl.TicketID] {
			return fmt.Errorf("ticket %s is unknown or appears twice", pl.TicketID)
		}
		seen[pl.TicketID] = true
		e, ok := resolve(rs, t, now, f.maxTeam(), f.hasLatencyRule())
		if !ok {
			return fmt.Errorf("ticket %s can never match", pl.TicketID)
		}
		team := -1
		if !t.Backfill {
			idx := rs.InstancesOf(pl.Team)
			if len(idx) != 1 || rs.Instances[idx[0]].Name != pl.Team {
				return fmt.Errorf("ticket %s: %q is not a team instance", pl.TicketID, pl.Team)
			}
			team = idx[0]
		} else if c.hasBF {
			return fmt.Errorf("match holds two backfill tickets")
		}
		c.add(e, team)
	}
	if c.nPlay > c.target() {
		return fmt.Errorf("match holds %d players, more than %d", c.nPlay, c.target())
	}
	if !c.complete() {
		return fmt.Errorf("match does not satisfy the rule set at ages up to %.1fs", c.age())
	}
	return nil
}
