package live

import "github.com/anylift/anylift/internal/game"

// maxInterned bounds the strings an interner keeps: past it, new strings
// are kept as they come, so memory stays bounded however many distinct
// fleets, computes or addresses pass through.
const maxInterned = 100_000

// interner keeps one copy of strings that many sessions repeat (fleet,
// location, compute, address, status, policies, property keys), so a
// session decoded from the store does not hold its own copy of each.
// Strings that belong to one session or a few are not interned: the
// process id (a process hosts one game session in its life) and the
// creator id (one per player on the player gateway). Interned, each would
// stay after its session ended, until the map filled with dead ids and
// stopped interning anything (the soak run in docs/benchmarks.md saw the
// heap grow by one entry per process).
// Only Apply uses it, under the write lock.
type interner struct {
	m map[string]string
}

func (in *interner) get(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

// session returns a copy of s whose repeated strings are interned.
func (in *interner) session(s *game.GameSession) *game.GameSession {
	c := *s
	c.FleetID, c.FleetARN, c.Location = in.get(c.FleetID), in.get(c.FleetARN), in.get(c.Location)
	c.ComputeName = in.get(c.ComputeName)
	c.IPAddress, c.DNSName = in.get(c.IPAddress), in.get(c.DNSName)
	c.Status, c.StatusReason = in.get(c.Status), in.get(c.StatusReason)
	c.PlayerSessionCreationPolicy, c.ProtectionPolicy = in.get(c.PlayerSessionCreationPolicy), in.get(c.ProtectionPolicy)
	if len(s.Properties) > 0 {
		c.Properties = make([]game.Property, len(s.Properties))
		for i, p := range s.Properties {
			c.Properties[i] = game.Property{Key: in.get(p.Key), Value: p.Value}
		}
	}
	return &c
}
