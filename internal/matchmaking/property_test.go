package matchmaking

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"testing/quick"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// genPool makes a random pool: parties of 1–3 players (sometimes larger
// than a team), skills, characters, block lists and latencies, started
// over the last minute.
func genPool(rng *rand.Rand, n int) []Ticket {
	chars := []string{"medic", "tank", "scout", "sniper", "peasant"}
	locs := []string{"us-east-1", "us-west-2", "eu-west-1"}
	var pool []Ticket
	for i := range n {
		t := Ticket{ID: fmt.Sprintf("t%03d", i), StartTime: t0.Add(time.Duration(rng.Intn(60000)) * time.Millisecond)}
		size := 1 + rng.Intn(3)
		if rng.Intn(10) == 0 {
			size = 1 + rng.Intn(6)
		}
		for j := range size {
			p := Player{ID: fmt.Sprintf("p%03d-%d", i, j), Attributes: map[string]ruleset.Value{}, LatencyMs: map[string]int{}}
			if rng.Intn(8) != 0 {
				p.Attributes["skill"] = num(float64(rng.Intn(100)))
			}
			if rng.Intn(3) != 0 {
				p.Attributes["character"] = ruleset.Value{Type: ruleset.TypeString, S: chars[rng.Intn(len(chars))]}
			}
			if rng.Intn(4) == 0 {
				p.Attributes["BlockList"] = ruleset.Value{Type: ruleset.TypeStringList,
					SL: []string{fmt.Sprintf("p%03d-0", rng.Intn(n))}}
			}
			for _, l := range locs {
				if rng.Intn(3) != 0 {
					p.LatencyMs[l] = 10 + rng.Intn(190)
				}
			}
			t.Players = append(t.Players, p)
		}
		pool = append(pool, t)
	}
	return pool
}

// invariants checks, without the matcher's own code where it can, that
// matches use each ticket once, keep parties whole on teams within their
// sizes, and satisfy the rule set.
func invariants(rs *ruleset.RuleSet, pool []Ticket, ms []Match, now time.Time, extra func(Match, map[string]*Ticket) error) error {
	byID := map[string]*Ticket{}
	for i := range pool {
		byID[pool[i].ID] = &pool[i]
	}
	used := map[string]bool{}
	for _, m := range ms {
		sizes := map[string]int{}
		for _, pl := range m.Tickets {
			if used[pl.TicketID] {
				return fmt.Errorf("ticket %s in two matches", pl.TicketID)
			}
			used[pl.TicketID] = true
			sizes[pl.Team] += len(byID[pl.TicketID].Players) // the whole party, on one team
		}
		for _, in := range rs.Instances {
			if sizes[in.Name] > in.MaxPlayers {
				return fmt.Errorf("team %s holds %d > %d", in.Name, sizes[in.Name], in.MaxPlayers)
			}
			delete(sizes, in.Name)
		}
		if len(sizes) != 0 {
			return fmt.Errorf("players on unknown teams %v", sizes)
		}
		if err := Check(rs, pool, m, now, Options{}); err != nil {
			return err
		}
		if extra != nil {
			if err := extra(m, byID); err != nil {
				return err
			}
		}
	}
	return nil
}

func matchPlayers(m Match, byID map[string]*Ticket) []Player {
	var out []Player
	for _, pl := range m.Tickets {
		out = append(out, byID[pl.TicketID].Players...)
	}
	return out
}

// newestAge is the age of the youngest ticket of m at now.
func newestAge(m Match, byID map[string]*Ticket, now time.Time) float64 {
	age := math.Inf(1)
	for _, pl := range m.Tickets {
		age = math.Min(age, now.Sub(byID[pl.TicketID].StartTime).Seconds())
	}
	return age
}

func TestPropertyMatchesKeepTheirRules(t *testing.T) {
	cases := []struct {
		fixture string
		extra   func(now time.Time) func(Match, map[string]*Ticket) error
	}{
		{"one_vs_one_skill.json", func(now time.Time) func(Match, map[string]*Ticket) error {
			return func(m Match, byID map[string]*Ticket) error {
				limit := 10.0
				if newestAge(m, byID, now) >= 5 {
					limit = 50
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, p := range matchPlayers(m, byID) {
					s := p.Attributes["skill"].N
					lo, hi = math.Min(lo, s), math.Max(hi, s)
				}
				if hi-lo > limit {
					return fmt.Errorf("skills %v..%v exceed %v", lo, hi, limit)
				}
				return nil
			}
		}},
		{"ex11_block_list.json", func(time.Time) func(Match, map[string]*Ticket) error {
			return func(m Match, byID map[string]*Ticket) error {
				in := map[string]bool{}
				ps := matchPlayers(m, byID)
				for _, p := range ps {
					in[p.ID] = true
				}
				for _, p := range ps {
					for _, b := range p.Attributes["BlockList"].SL {
						if in[b] {
							return fmt.Errorf("%s blocks %s, both matched", p.ID, b)
						}
					}
				}
				return nil
			}
		}},
		{"ex03_trios.json", func(now time.Time) func(Match, map[string]*Ticket) error {
			return func(m Match, byID map[string]*Ticket) error {
				maxLat := 50.0
				if age := newestAge(m, byID, now); age >= 20 {
					maxLat = 150
				} else if age >= 10 {
					maxLat = 100
				}
				if len(m.Locations) == 0 {
					return fmt.Errorf("no location")
				}
				for _, pl := range m.Tickets {
					var sum float64
					ps := byID[pl.TicketID].Players
					for _, p := range ps {
						sum += float64(p.LatencyMs[m.Locations[0]])
					}
					if sum/float64(len(ps)) > maxLat {
						return fmt.Errorf("ticket %s at %s: %v > %v", pl.TicketID, m.Locations[0], sum/float64(len(ps)), maxLat)
					}
				}
				return nil
			}
		}},
		{"ex01_even_teams_with_comments.json", nil},
		{"ex02_uneven_teams.json", func(time.Time) func(Match, map[string]*Ticket) error {
			return func(m Match, byID map[string]*Ticket) error {
				monster, best := math.Inf(-1), math.Inf(-1)
				for _, pl := range m.Tickets {
					for _, p := range byID[pl.TicketID].Players {
						s := p.Attributes["skill"].N
						if pl.Team == "monster" {
							monster = s
						} else {
							best = math.Max(best, s)
						}
					}
				}
				if monster <= best {
					return fmt.Errorf("monster skill %v does not exceed the players' best %v", monster, best)
				}
				return nil
			}
		}},
		{"ex06_compare_without_reference.json", func(time.Time) func(Match, map[string]*Ticket) error {
			return func(m Match, byID map[string]*Ticket) error {
				seen := map[string]bool{}
				for _, p := range matchPlayers(m, byID) {
					c := p.Attributes["character"].S
					if seen[c] {
						return fmt.Errorf("character %s twice", c)
					}
					seen[c] = true
				}
				return nil
			}
		}},
		{"ex07_duplicate_keys.json", nil},
		{"ex10_compound.json", nil},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			rs := fixture(t, c.fixture)
			matched := 0
			prop := func(seed int64) bool {
				rng := rand.New(rand.NewSource(seed))
				pool := genPool(rng, 5+rng.Intn(40))
				now := t0.Add(time.Duration(rng.Intn(90000)) * time.Millisecond)
				ms := Find(rs, pool, now, Options{Seed: seed})
				matched += len(ms)
				var extra func(Match, map[string]*Ticket) error
				if c.extra != nil {
					extra = c.extra(now)
				}
				if err := invariants(rs, pool, ms, now, extra); err != nil {
					t.Logf("seed %d: %v", seed, err)
					return false
				}
				return true
			}
			if err := quick.Check(prop, &quick.Config{MaxCount: 150, Rand: rand.New(rand.NewSource(1))}); err != nil {
				t.Fatal(err)
			}
			if matched == 0 && c.fixture != "ex10_compound.json" {
				t.Errorf("no match in any pool: the property says nothing")
			}
			t.Logf("%d matches checked", matched)
		})
	}
}
