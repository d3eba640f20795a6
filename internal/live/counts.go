package live

import "github.com/anylift/anylift/internal/game"

// CountLive calls visit once for each location and compute of the fleet
// with live sessions: how many are ACTIVATING and ACTIVE, and the player
// seats they all hold (committed ones: seats held by reservations not yet
// committed are not counted), as the store's fleet metrics group them
// (store.LiveSessionCounts). ok is false, and visit not called, when the
// memory does not answer for the fleet (it does not know it, or is
// loading it): the store must count.
func (l *Sessions) CountLive(fleetID string, visit func(location, compute string, activating, active, players int64)) (ok bool) {
	type key struct{ location, compute string }
	type count struct{ activating, active, players int64 }
	var order []key
	groups := map[key]*count{}
	l.mu.RLock()
	f := l.fleets[fleetID]
	if ok = f.answers(); ok {
		f.live.ascend(nil, func(e *entry) bool {
			k := key{e.s.Location, e.s.ComputeName}
			c := groups[k]
			if c == nil {
				c = &count{}
				groups[k] = c
				order = append(order, k)
			}
			switch e.s.Status {
			case game.SessionActivating:
				c.activating++
			case game.SessionActive:
				c.active++
			}
			c.players += int64(e.cur)
			return true
		})
	}
	l.mu.RUnlock()
	for _, k := range order {
		c := groups[k]
		visit(k.location, k.compute, c.activating, c.active, c.players)
	}
	return ok
}
