package matchmaking

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func fixture(t testing.TB, name string) *ruleset.RuleSet {
	t.Helper()
	b, err := os.ReadFile("ruleset/testdata/valid/" + name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ruleset.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func mustParse(t testing.TB, body string) *ruleset.RuleSet {
	t.Helper()
	rs, err := ruleset.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func num(n float64) ruleset.Value { return ruleset.Value{Type: ruleset.TypeNumber, N: n} }

// solo is a one-player ticket started at t0+start seconds.
func solo(id string, start float64, attrs map[string]ruleset.Value) Ticket {
	return Ticket{ID: id, StartTime: t0.Add(time.Duration(start * float64(time.Second))),
		Players: []Player{{ID: "p-" + id, Attributes: attrs}}}
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// shape renders matches as "a+b | c" with tickets sorted inside a match.
func shape(ms []Match) string {
	var parts []string
	for _, m := range ms {
		var ids []string
		for _, p := range m.Tickets {
			ids = append(ids, p.TicketID)
		}
		sort.Strings(ids)
		parts = append(parts, strings.Join(ids, "+"))
	}
	sort.Strings(parts)
	return strings.Join(parts, " | ")
}

// TestExpansionClock is the spec's T-EXP-2: with the newest ticket's age
// driving the expansion, the pair never forms; each player matches alone.
func TestExpansionClock(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0", %s "teams": [{"name": "player", "minPlayers": 4, "maxPlayers": 4}],
	  "expansions": [{"target": "teams[player].minPlayers", "steps": [
	    {"waitTimeSeconds": 30, "value": 3}, {"waitTimeSeconds": 40, "value": 2}, {"waitTimeSeconds": 45, "value": 1}]}]}`
	pool := []Ticket{solo("p1", 0, nil), solo("p2", 10, nil)}
	newest := mustParse(t, fmt.Sprintf(body, ""))
	for _, c := range []struct {
		sec  float64
		pool []Ticket
		want string
	}{{40, pool, ""}, {44.9, pool, ""}, {45, pool, "p1"}, {54.9, pool[1:], ""}, {55, pool[1:], "p2"}} {
		if got := shape(Find(newest, c.pool, at(c.sec), Options{})); got != c.want {
			t.Errorf("newest at %vs: %q, want %q", c.sec, got, c.want)
		}
	}
	oldest := mustParse(t, fmt.Sprintf(body, `"algorithm": {"expansionAgeSelection": "oldest"},`))
	if got := shape(Find(oldest, pool, at(39.9), Options{})); got != "" {
		t.Errorf("oldest at 39.9s: %q", got)
	}
	if got := shape(Find(oldest, pool, at(40), Options{})); got != "p1+p2" {
		t.Errorf("oldest at 40s: %q, want the pair", got)
	}
}

// TestExpansionRelaxesDistance is T-EXP-1.
func TestExpansionRelaxesDistance(t *testing.T) {
	rs := mustParse(t, `{"ruleLanguageVersion": "1.0", "playerAttributes": [{"name": "skill", "type": "number"}],
	  "teams": [{"name": "duo", "minPlayers": 2, "maxPlayers": 2}],
	  "rules": [{"name": "Close", "type": "distance", "measurements": "max(flatten(teams[*].players.attributes[skill]))",
	    "referenceValue": "min(flatten(teams[*].players.attributes[skill]))", "maxDistance": 10}],
	  "expansions": [{"target": "rules[Close].maxDistance", "steps": [{"waitTimeSeconds": 5, "value": 50}]}]}`)
	pool := []Ticket{solo("a", 0, map[string]ruleset.Value{"skill": num(0)}), solo("b", 0, map[string]ruleset.Value{"skill": num(30)})}
	if got := shape(Find(rs, pool, at(4.9), Options{})); got != "" {
		t.Errorf("at 4.9s: %q", got)
	}
	if got := shape(Find(rs, pool, at(5), Options{})); got != "a+b" {
		t.Errorf("at 5s: %q", got)
	}
	pool[1].Players[0].Attributes = nil // no skill, no default: never matches
	if got := shape(Find(rs, pool, at(500), Options{})); got != "" || !Unmatchable(rs, pool[1]) {
		t.Errorf("ticket without a required attribute matched: %q", got)
	}
}

// TestMinMax is T-MINMAX-1 on Example 1.
func TestMinMax(t *testing.T) {
	rs := fixture(t, "ex01_even_teams_with_comments.json")
	for n, want := range map[int][]int{7: nil, 8: {4, 4}, 9: {4, 4}, 10: {5, 5}, 16: {8, 8}, 17: {8, 8}} {
		var pool []Ticket
		for i := range n {
			pool = append(pool, solo(fmt.Sprintf("t%02d", i), float64(i)/10, nil))
		}
		ms := Find(rs, pool, at(1), Options{})
		if want == nil {
			if len(ms) != 0 {
				t.Errorf("%d tickets: %d matches", n, len(ms))
			}
			continue
		}
		if len(ms) != 1 {
			t.Fatalf("%d tickets: %d matches, want 1", n, len(ms))
		}
		sizes := map[string]int{}
		for _, p := range ms[0].Tickets {
			sizes[p.Team]++
		}
		if sizes["cowboys"] != want[0] || sizes["aliens"] != want[1] {
			t.Errorf("%d tickets: teams %v, want %v", n, sizes, want)
		}
		if err := Check(rs, pool, ms[0], at(1), Options{}); err != nil {
			t.Error(err)
		}
	}
}

// TestParties is T-PARTY-1.
func TestParties(t *testing.T) {
	rs := mustParse(t, `{"ruleLanguageVersion": "1.0", "teams": [{"name": "red", "minPlayers": 2, "maxPlayers": 2}, {"name": "blue", "minPlayers": 2, "maxPlayers": 2}]}`)
	trio := Ticket{ID: "trio", StartTime: t0, Players: []Player{{ID: "a"}, {ID: "b"}, {ID: "c"}}}
	duo := Ticket{ID: "duo", StartTime: t0, Players: []Player{{ID: "d"}, {ID: "e"}}}
	pool := []Ticket{trio, duo, solo("s1", 1, nil), solo("s2", 2, nil)}
	ms := Find(rs, pool, at(10), Options{})
	if shape(ms) != "duo+s1+s2" || !Unmatchable(rs, trio) {
		t.Fatalf("matches %q", shape(ms))
	}
	for _, p := range ms[0].Tickets {
		if p.TicketID != "duo" {
			continue
		}
		for _, q := range ms[0].Tickets {
			if q.TicketID != "duo" && q.Team == p.Team {
				t.Errorf("the duo's team also holds %s", q.TicketID)
			}
		}
	}
}

// TestLargeFillOrder is T-LRG-1: Example 8's teams filled one solo
// player at a time.
func TestLargeFillOrder(t *testing.T) {
	rs := fixture(t, "ex08_monster_hunters_large.json")
	f := newFinder(rs, Options{})
	c := f.newCandidate()
	c.placed = append(c.placed, placement{e: &entry{t: &Ticket{StartTime: t0}}, team: 0}) // only for age()
	checks := map[int][2]int{100: {10, 0}, 122: {12, 2}, 125: {12, 5}, 155: {15, 5}}
	for n := 1; n <= 155; n++ {
		c.sizes[c.fillOrder(1)[0]]++
		if want, ok := checks[n]; ok {
			for i, in := range rs.Instances {
				w := want[0]
				if in.Base == "Monsters" {
					w = want[1]
				}
				if c.sizes[i] != w {
					t.Errorf("after %d players %s has %d, want %d", n, in.Name, c.sizes[i], w)
				}
			}
		}
	}
}

func TestLargeMatchForms(t *testing.T) {
	rs := fixture(t, "ex08_monster_hunters_large.json")
	var pool []Ticket
	for i := range 160 {
		tk := solo(fmt.Sprintf("t%03d", i), 0, map[string]ruleset.Value{"monster-kills": num(float64(i % 7))})
		tk.Players[0].LatencyMs = map[string]int{"us-west-2": 40 + i%50, "eu-west-1": 200}
		pool = append(pool, tk)
	}
	ms := Find(rs, pool, at(1), Options{})
	if len(ms) != 1 || len(ms[0].Tickets) != 155 || strings.Join(ms[0].Locations, ",") != "us-west-2" {
		t.Fatalf("%d matches: %d tickets, locations %v", len(ms), len(ms[0].Tickets), ms[0].Locations)
	}
	if err := Check(rs, pool, ms[0], at(1), Options{}); err != nil {
		t.Error(err)
	}
}

// TestBlockList is T-BLK-1.
func TestBlockList(t *testing.T) {
	rs := fixture(t, "ex11_block_list.json")
	var pool []Ticket
	for i := 1; i <= 10; i++ {
		pool = append(pool, solo(fmt.Sprintf("t%02d", i), 0, nil))
	}
	pool[0].Players[0].Attributes = map[string]ruleset.Value{"BlockList": {Type: ruleset.TypeStringList, SL: []string{"p-t02"}}}
	if ms := Find(rs, pool, at(100), Options{}); len(ms) != 0 {
		t.Fatalf("a blocked pair was matched: %q", shape(ms))
	}
	b, _ := os.ReadFile("ruleset/testdata/valid/ex11_block_list.json")
	avoid := strings.Replace(string(b), `"rules"`, `"expansions": [{"target": "rules[PlayerIdNotInBlockList].maxCount",
	  "steps": [{"waitTimeSeconds": 10, "value": 1}]}], "rules"`, 1)
	rs = mustParse(t, avoid)
	pool[9].StartTime = at(5)
	if ms := Find(rs, pool, at(14.9), Options{}); len(ms) != 0 {
		t.Fatalf("avoid list relaxed before the newest ticket was 10 s old: %q", shape(ms))
	}
	if ms := Find(rs, pool, at(15), Options{}); len(ms) != 1 || len(ms[0].Tickets) != 10 {
		t.Fatalf("avoid list relaxed: %q", shape(ms))
	}
}

// TestCompound is T-CMP-1 on Example 10: far-apart skills, same map and
// mode, match through the first branch.
func TestCompound(t *testing.T) {
	rs := fixture(t, "ex10_compound.json")
	var pool []Ticket
	for i := range 20 {
		pool = append(pool, solo(fmt.Sprintf("t%02d", i), 0, map[string]ruleset.Value{"skill": num(float64(i * 100))}))
	}
	ms := Find(rs, pool, at(1), Options{})
	if len(ms) != 1 || len(ms[0].Tickets) != 20 {
		t.Fatalf("same map and mode: %q", shape(ms))
	}
	pool[3].Players[0].Attributes["map"] = ruleset.Value{Type: ruleset.TypeString, S: "desert"}
	if ms := Find(rs, pool, at(1), Options{}); len(ms) != 0 {
		t.Fatalf("neither branch holds, yet matched: %q", shape(ms))
	}
}

func TestLatency(t *testing.T) {
	rs := fixture(t, "ex03_trios.json")
	var pool []Ticket
	for i := range 9 {
		tk := solo(fmt.Sprintf("t%d", i), 0, nil)
		tk.Players[0].LatencyMs = map[string]int{"us-east-1": 30, "us-west-2": 45}
		if i == 4 {
			tk.Players[0].LatencyMs = map[string]int{"eu-west-1": 20}
		}
		pool = append(pool, tk)
	}
	if ms := Find(rs, pool, at(1), Options{}); len(ms) != 0 {
		t.Fatalf("disjoint locations matched: %q", shape(ms))
	}
	pool[4].Players[0].LatencyMs = map[string]int{"us-west-2": 20, "eu-west-1": 5}
	ms := Find(rs, pool, at(1), Options{})
	if len(ms) != 1 || strings.Join(ms[0].Locations, ",") != "us-west-2" {
		t.Fatalf("matches %q %+v", shape(ms), ms)
	}
	pool[4].Players[0].LatencyMs = nil
	if !Unmatchable(rs, pool[4]) {
		t.Error("a ticket without latency under a latency rule can match")
	}
}

func TestBackfill(t *testing.T) {
	rs := fixture(t, "one_vs_one_skill.json")
	bf := Ticket{ID: "bf", Backfill: true, StartTime: t0,
		Players: []Player{{ID: "old", Team: "red", Attributes: map[string]ruleset.Value{"skill": num(20)}}}}
	pool := []Ticket{bf, {ID: "bf2", Backfill: true, StartTime: t0,
		Players: []Player{{ID: "old2", Team: "blue", Attributes: map[string]ruleset.Value{"skill": num(20)}}}}}
	if ms := Find(rs, pool, at(1), Options{}); len(ms) != 0 {
		t.Fatalf("backfill tickets matched together or alone: %q", shape(ms))
	}
	pool = append(pool, solo("new", 0.5, map[string]ruleset.Value{"skill": num(25)}))
	ms := Find(rs, pool, at(1), Options{})
	if len(ms) != 1 || shape(ms) != "bf+new" || ms[0].Tickets[1].Team != "blue" {
		t.Fatalf("backfill: %+v", ms)
	}
	if err := Check(rs, pool, ms[0], at(1), Options{}); err != nil {
		t.Error(err)
	}
}

func parseOK(body string) (*ruleset.RuleSet, error) { return ruleset.Parse(body) }

func TestAdditionalPlayerCount(t *testing.T) {
	rs := fixture(t, "ex01_even_teams_with_comments.json")
	var pool []Ticket
	for i := range 16 {
		pool = append(pool, solo(fmt.Sprintf("t%02d", i), float64(i)/10, nil))
	}
	ms := Find(rs, pool, at(2), Options{AdditionalPlayerCount: 2})
	if len(ms) != 1 || len(ms[0].Tickets) != 14 {
		t.Fatalf("16 tickets with 2 slots kept free: %q", shape(ms))
	}
}

// TestSortRules: candidates are ordered by Example 4's sort rules relative
// to the anchor — first the value at the anchor's favourite map (highest
// first), then closeness of experience.
func TestSortRules(t *testing.T) {
	rs := fixture(t, "ex04_sorts_and_intersection.json")
	f := newFinder(rs, Options{})
	mk := func(id string, maps map[string]float64, exp float64) *entry {
		tk := solo(id, 0, map[string]ruleset.Value{"experience": num(exp),
			"mapPreference": {Type: ruleset.TypeStringNumberMap, SDM: maps}})
		e, ok := resolve(rs, &tk, at(1), 5, false)
		if !ok {
			t.Fatal("unresolvable")
		}
		return e
	}
	anchor := mk("anchor", map[string]float64{"harbor": 90, "desert": 10}, 50)
	pool := []*entry{anchor,
		mk("far", map[string]float64{"harbor": 80}, 90),
		mk("near", map[string]float64{"harbor": 80}, 52),
		mk("best", map[string]float64{"harbor": 99}, 0),
		mk("nomap", map[string]float64{"desert": 100}, 50)}
	var got []string
	for _, e := range f.candidates(anchor, pool, map[*entry]bool{}) {
		got = append(got, e.t.ID)
	}
	if strings.Join(got, ",") != "best,near,far,nomap" {
		t.Errorf("candidate order %v", got)
	}
}

func strs(s ...string) ruleset.Value { return ruleset.Value{Type: ruleset.TypeStringList, SL: s} }

// TestPreferredOpponents: Example 5's red players each need a preferred
// opponent on blue (a minCount rule, checked on completion).
func TestPreferredOpponents(t *testing.T) {
	rs := fixture(t, "ex05_preferred_opponents.json")
	pool := []Ticket{
		solo("a", 0, map[string]ruleset.Value{"opponents": strs("p-b")}),
		solo("b", 1, map[string]ruleset.Value{"opponents": strs()}),
	}
	ms := Find(rs, pool, at(5), Options{})
	if len(ms) != 1 {
		t.Fatalf("matches %q", shape(ms))
	}
	teams := map[string]string{}
	for _, p := range ms[0].Tickets {
		teams[p.TicketID] = p.Team
	}
	if teams["a"] != "red" || teams["b"] != "blue" {
		t.Errorf("teams %v", teams)
	}
	pool[0].Players[0].Attributes["opponents"] = strs("p-zz")
	if ms := Find(rs, pool, at(5), Options{}); len(ms) != 0 {
		t.Errorf("no preferred opponent, yet matched %q", shape(ms))
	}
}

// TestBatchDistance: Example 9's bands keep far-apart skills and other
// game modes out of a match.
func TestBatchDistance(t *testing.T) {
	rs := fixture(t, "ex09_large_batch_distance.json")
	var pool []Ticket
	for i := range 100 {
		tk := solo(fmt.Sprintf("t%03d", i), 0, map[string]ruleset.Value{"skill": num(float64(1000 + i))})
		tk.Players[0].LatencyMs = map[string]int{"us-west-2": 60}
		pool = append(pool, tk)
	}
	extra := solo("far", 0, map[string]ruleset.Value{"skill": num(1600)})
	extra.Players[0].LatencyMs = map[string]int{"us-west-2": 60}
	mode := solo("mode", 0, map[string]ruleset.Value{"gameMode": {Type: ruleset.TypeString, S: "rush"}})
	mode.Players[0].LatencyMs = map[string]int{"us-west-2": 60}
	pool = append([]Ticket{extra, mode}, pool...)
	ms := Find(rs, pool, at(10), Options{})
	if len(ms) != 1 || len(ms[0].Tickets) != 100 {
		t.Fatalf("%d matches", len(ms))
	}
	for _, p := range ms[0].Tickets {
		if p.TicketID == "far" || p.TicketID == "mode" {
			t.Errorf("%s joined the match", p.TicketID)
		}
	}
	if err := Check(rs, pool, ms[0], at(10), Options{}); err != nil {
		t.Error(err)
	}
}

// TestFastestRegion: with fastestRegion, tickets whose best location is
// the anchor's are preferred over closer balanced-attribute values.
func TestFastestRegion(t *testing.T) {
	rs := fixture(t, "ex08_monster_hunters_large.json")
	f := newFinder(rs, Options{})
	mk := func(id string, kills float64, lat map[string]int) *entry {
		tk := solo(id, 0, map[string]ruleset.Value{"monster-kills": num(kills)})
		tk.Players[0].LatencyMs = lat
		e, ok := resolve(rs, &tk, at(1), 15, true)
		if !ok {
			t.Fatal("unresolvable")
		}
		return e
	}
	anchor := mk("anchor", 5, map[string]int{"us-west-2": 20, "us-east-1": 80})
	pool := []*entry{anchor, mk("east", 5, map[string]int{"us-west-2": 90, "us-east-1": 10}),
		mk("west", 50, map[string]int{"us-west-2": 30, "us-east-1": 70})}
	var got []string
	for _, e := range f.candidates(anchor, pool, map[*entry]bool{}) {
		got = append(got, e.t.ID)
	}
	if strings.Join(got, ",") != "west,east" {
		t.Errorf("candidate order %v", got)
	}
}

// TestBalancedTeams: the balanced strategy evens out team averages of the
// balanced attribute after forming the match.
func TestBalancedTeams(t *testing.T) {
	rs := mustParse(t, `{"ruleLanguageVersion": "1.0", "playerAttributes": [{"name": "skill", "type": "number"}],
	  "algorithm": {"strategy": "balanced", "balancedAttribute": "skill"},
	  "teams": [{"name": "red", "minPlayers": 3, "maxPlayers": 3}, {"name": "blue", "minPlayers": 3, "maxPlayers": 3}]}`)
	var pool []Ticket
	for i, s := range []float64{1, 2, 3, 10, 11, 12} {
		pool = append(pool, solo(fmt.Sprintf("t%d", i), float64(i), map[string]ruleset.Value{"skill": num(s)}))
	}
	ms := Find(rs, pool, at(10), Options{})
	if len(ms) != 1 {
		t.Fatalf("matches %q", shape(ms))
	}
	sum := map[string]float64{}
	for _, p := range ms[0].Tickets {
		var s float64
		fmt.Sscanf(p.TicketID, "t%f", &s)
		sum[p.Team] += []float64{1, 2, 3, 10, 11, 12}[int(s)]
	}
	if d := sum["red"] - sum["blue"]; d > 5 || d < -5 {
		t.Errorf("team skill sums %v: the best split differs by 5", sum)
	}
}
