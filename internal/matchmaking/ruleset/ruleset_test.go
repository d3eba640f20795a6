package ruleset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExamplesLoad(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.json")
	if len(files) < 13 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(string(b)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func load(t *testing.T, name string) *RuleSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/valid", name))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestExampleDetails(t *testing.T) {
	ex1 := load(t, "ex01_even_teams_with_comments.json")
	if ex1.Capacity() != 16 || ex1.Algorithm.Strategy != Exhaustive || ex1.Algorithm.BatchingPreference != "random" ||
		ex1.Algorithm.ExpansionAgeSelection != "newest" || ex1.Attributes[0].Default.N != 10 {
		t.Errorf("example 1 defaults: %+v", ex1)
	}
	fair, _ := ex1.Rule("FairTeamSkill")
	if fair.PartyAggregation != "avg" || *fair.MaxDistance != 10 || fair.Reference.Expr == nil ||
		!fair.Measurements[0].Arg.Grouped || fair.Measurements[0].Func != "avg" {
		t.Errorf("FairTeamSkill %+v", fair)
	}
	if v, ok := ex1.Expansions[0].ValueAt(14.9); !ok || v != 50 {
		t.Errorf("expansion at 14.9s = %v %v", v, ok)
	}
	if _, ok := ex1.Expansions[0].ValueAt(4.9); ok {
		t.Error("expansion applied before its first step")
	}

	ex3 := load(t, "ex03_trios.json")
	if len(ex3.Instances) != 3 || ex3.Instances[2].Name != "trio_3" || ex3.Instances[2].Base != "trio" {
		t.Errorf("trio instances %+v", ex3.Instances)
	}
	ex7 := load(t, "ex07_duplicate_keys.json")
	if x := ex7.Expansions[0]; x.Target.Team != "red" || len(x.Steps) != 2 {
		t.Errorf("duplicate keys: the last pair must win, got %+v", x)
	}
	ex8 := load(t, "ex08_monster_hunters_large.json")
	if !ex8.Large() || ex8.Capacity() != 155 || len(ex8.InstancesOf("Hunters")) != 10 {
		t.Errorf("example 8 capacity %d", ex8.Capacity())
	}
	ex9 := load(t, "ex09_large_batch_distance.json")
	if r, _ := ex9.Rule("SkillBand"); *r.MaxDistance != 500 {
		t.Errorf("numeric string maxDistance = %v", *r.MaxDistance)
	}
	if ex9.Attributes[1].Default.N != 3 {
		t.Errorf("numeric string default = %v", ex9.Attributes[1].Default)
	}
	ex10 := load(t, "ex10_compound.json")
	for _, n := range []string{"SameMapComparison", "SimilarLeagueDistance"} {
		if r, _ := ex10.Rule(n); !r.Operand || r.Enforced() {
			t.Errorf("%s must be enforced only through the compound statement", n)
		}
	}
	ex11 := load(t, "ex11_block_list.json")
	if r := ex11.Rules[0]; len(r.Measurements) != 1 || r.Reference.Expr.Arg.Select != SelectPlayerIDs {
		t.Errorf("block list rule %+v", r)
	}
}

const twoTeams = `"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 2}, {"name": "blue", "minPlayers": 1, "maxPlayers": 2}]`
const skillAttr = `"playerAttributes": [{"name": "skill", "type": "number"}]`

func body(members ...string) string {
	return `{` + strings.Join(append([]string{`"ruleLanguageVersion": "1.0"`}, members...), ", ") + `}`
}

func rules(r ...string) string { return `"rules": [` + strings.Join(r, ", ") + `]` }

func TestInvalid(t *testing.T) {
	dist := `{"name": "FairTeamSkill", "type": "distance", "measurements": ["avg(teams[*].players.attributes[skill])"], "referenceValue": 10`
	cases := []struct {
		name, body, want string
	}{
		{"empty", ``, "1 to 65535"},
		{"not json", `{"ruleLanguageVersion": `, "not valid JSON"},
		{"array", `[1]`, "JSON object"},
		{"no version", `{` + twoTeams + `}`, "ruleLanguageVersion is required"},
		{"bad version", body(`"ruleLanguageVersion": "2.0"`, twoTeams), `must be "1.0"`},
		{"no teams", body(), "teams is required"},
		{"empty teams", body(`"teams": []`), "at least one team"},
		{"dup team", body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 2}, {"name": "a", "minPlayers": 1, "maxPlayers": 2}]`), `team name "a" is used twice`},
		{"min over max", body(`"teams": [{"name": "a", "minPlayers": 3, "maxPlayers": 2}]`), "minPlayers"},
		{"max zero", body(`"teams": [{"name": "a", "minPlayers": 0, "maxPlayers": 0}]`), "maxPlayers"},
		{"fractional", body(`"teams": [{"name": "a", "minPlayers": 1.5, "maxPlayers": 2}]`), "integer"},
		{"no maxPlayers", body(`"teams": [{"name": "a", "minPlayers": 1}]`), "maxPlayers is required"},
		{"instance collides", body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}, {"name": "a_1", "minPlayers": 1, "maxPlayers": 1}]`), `"a_1" is used twice`},
		{"capacity 201", body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 67, "quantity": 3}]`, `"algorithm": {"strategy": "balanced", "balancedAttribute": "s"}`, `"playerAttributes": [{"name": "s", "type": "number"}]`), "at most 200"},
		{"large without balanced", body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 41}]`), "large match needs strategy"},
		{"dup attribute", body(twoTeams, `"playerAttributes": [{"name": "s", "type": "number"}, {"name": "s", "type": "string"}]`), "declared twice"},
		{"bad type", body(twoTeams, `"playerAttributes": [{"name": "s", "type": "integer"}]`), `"integer" is not one of`},
		{"bad default", body(twoTeams, `"playerAttributes": [{"name": "s", "type": "number", "default": "ten"}]`), "not a valid number value"},
		{"bad default list", body(twoTeams, `"playerAttributes": [{"name": "s", "type": "string_list", "default": "x"}]`), "not a valid string_list"},
		{"bad strategy", body(twoTeams, `"algorithm": {"strategy": "fast"}`), "strategy"},
		{"balanced without attribute", body(twoTeams, `"algorithm": {"strategy": "balanced"}`), "requires balancedAttribute"},
		{"balanced on string", body(twoTeams, `"playerAttributes": [{"name": "s", "type": "string"}]`, `"algorithm": {"strategy": "balanced", "balancedAttribute": "s"}`), "type number"},
		{"sorted pref on balanced", body(twoTeams, skillAttr, `"algorithm": {"strategy": "balanced", "balancedAttribute": "skill", "batchingPreference": "sorted"}`), "cannot be used"},
		{"sort attrs without sorted", body(twoTeams, skillAttr, `"algorithm": {"sortByAttributes": ["skill"]}`), `needs batchingPreference "sorted"`},
		{"sort attr undeclared", body(twoTeams, `"algorithm": {"batchingPreference": "sorted", "sortByAttributes": ["x"]}`), `"x" is not declared`},
		{"dup rule", body(twoTeams, skillAttr, rules(`{"name": "r", "type": "latency", "maxLatency": 1}`, `{"name": "r", "type": "latency", "maxLatency": 1}`)), `rule "r" (rules[1]): a rule of this name`},
		{"bad rule type", body(twoTeams, rules(`{"name": "r", "type": "magic"}`)), `rule "r" (rules[0]).type: value "magic"`},
		{"distance without max", body(twoTeams, skillAttr, rules(dist+`}`)), `rule "FairTeamSkill" (rules[0]): distance rule requires maxDistance`},
		{"distance without reference", body(twoTeams, skillAttr, rules(`{"name": "d", "type": "distance", "measurements": "count(teams[red].players)", "maxDistance": 1}`)), "referenceValue is required"},
		{"distance string reference", body(twoTeams, skillAttr, rules(dist+`, "maxDistance": 1, "referenceValue": "high"}`)), "needs a number"},
		{"no measurements", body(twoTeams, rules(`{"name": "c", "type": "comparison", "operation": "="}`)), `rule "c" (rules[0]): measurements is required`},
		{"bad operation", body(twoTeams, skillAttr, rules(`{"name": "c", "type": "comparison", "operation": "~", "measurements": "teams[red].players.attributes[skill]"}`)), `value "~" is not one of`},
		{"comparison < without reference", body(twoTeams, skillAttr, rules(`{"name": "c", "type": "comparison", "operation": "<", "measurements": "teams[red].players.attributes[skill]"}`)), "only = and !="},
		{"undeclared attribute", body(twoTeams, rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "teams[red].players.attributes[skill]"}`)), `attribute "skill" in`},
		{"unknown team", body(twoTeams, skillAttr, rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "teams[green].players.attributes[skill]"}`)), `team "green"`},
		{"bad expression", body(twoTeams, skillAttr, rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "avg(teams[*].players.attributes[skill]"}`)), "expected ')'"},
		{"unknown function", body(twoTeams, skillAttr, rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "mode(teams[*].players.attributes[skill])"}`)), `unknown function or property "mode"`},
		{"players key", body(twoTeams, rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "teams[*].players[name]"}`)), "only players[playerId]"},
		{"collection without bound", body(twoTeams, rules(`{"name": "c", "type": "collection", "operation": "intersection", "measurements": "teams[*].players[playerId]"}`)), "requires minCount or maxCount"},
		{"collection contains no reference", body(twoTeams, rules(`{"name": "c", "type": "collection", "operation": "contains", "measurements": "teams[*].players[playerId]", "maxCount": 1}`)), "referenceValue is required"},
		{"collection aggregation", body(twoTeams, rules(`{"name": "c", "type": "collection", "operation": "intersection", "measurements": "teams[*].players[playerId]", "minCount": 1, "partyAggregation": "avg"}`)), `"avg" is not one of union`},
		{"latency without max", body(twoTeams, rules(`{"name": "l", "type": "latency"}`)), "maxLatency is required"},
		{"latency reference", body(twoTeams, rules(`{"name": "l", "type": "latency", "maxLatency": 1, "distanceReference": "max"}`)), "distanceReference"},
		{"batch undeclared", body(twoTeams, rules(`{"name": "b", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 1}`)), `"skill" is not declared`},
		{"batch number no max", body(twoTeams, skillAttr, rules(`{"name": "b", "type": "batchDistance", "batchAttribute": "skill"}`)), "requires maxDistance"},
		{"sort no direction", body(twoTeams, skillAttr, rules(`{"name": "s", "type": "absoluteSort", "sortAttribute": "skill"}`)), "sortDirection is required"},
		{"mapKey on number", body(twoTeams, skillAttr, rules(`{"name": "s", "type": "distanceSort", "sortDirection": "ascending", "sortAttribute": "skill", "mapKey": "minValue"}`)), "only for string_number_map"},
		{"compound unknown", body(twoTeams, rules(`{"name": "c", "type": "compound", "statement": "and(A, B)"}`)), `rule "A" is not defined before`},
		{"compound later rule", body(twoTeams, rules(`{"name": "c", "type": "compound", "statement": "not(L)"}`, `{"name": "L", "type": "latency", "maxLatency": 1}`)), `rule "L" is not defined before`},
		{"compound batch", body(twoTeams, skillAttr, rules(`{"name": "b", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 1}`, `{"name": "c", "type": "compound", "statement": "not(b)"}`)), "batchDistance rule"},
		{"compound arity", body(twoTeams, rules(`{"name": "L", "type": "latency", "maxLatency": 1}`, `{"name": "c", "type": "compound", "statement": "and(L)"}`)), "two or more"},
		{"compound syntax", body(twoTeams, rules(`{"name": "L", "type": "latency", "maxLatency": 1}`, `{"name": "c", "type": "compound", "statement": "and(L, L"}`)), "expected"},
		{"large custom rule", body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 41}]`, skillAttr, `"algorithm": {"strategy": "balanced", "balancedAttribute": "skill"}`,
			rules(`{"name": "c", "type": "comparison", "operation": "=", "measurements": "teams[a].players.attributes[skill]"}`)), "may only use latency and batchDistance"},
		{"expansion unknown rule", body(twoTeams, `"expansions": [{"target": "rules[X].maxDistance", "steps": [{"waitTimeSeconds": 1, "value": 2}]}]`), `rule "X" is not defined`},
		{"expansion compound", body(twoTeams, rules(`{"name": "L", "type": "latency", "maxLatency": 1}`, `{"name": "c", "type": "compound", "statement": "not(L)"}`), `"expansions": [{"target": "rules[c].maxDistance", "steps": [{"waitTimeSeconds": 1, "value": 2}]}]`), "compound rule"},
		{"expansion property", body(twoTeams, rules(`{"name": "L", "type": "latency", "maxLatency": 1}`), `"expansions": [{"target": "rules[L].minCount", "steps": [{"waitTimeSeconds": 1, "value": 2}]}]`), "no expandable property minCount"},
		{"expansion team", body(twoTeams, `"expansions": [{"target": "teams[green].minPlayers", "steps": [{"waitTimeSeconds": 1, "value": 2}]}]`), `team "green"`},
		{"expansion target form", body(twoTeams, `"expansions": [{"target": "red.minPlayers", "steps": [{"waitTimeSeconds": 1, "value": 2}]}]`), "must be rules["},
		{"expansion no steps", body(twoTeams, `"expansions": [{"target": "teams[red].minPlayers", "steps": []}]`), "at least one step"},
		{"expansion order", body(twoTeams, `"expansions": [{"target": "teams[red].minPlayers", "steps": [{"waitTimeSeconds": 5, "value": 1}, {"waitTimeSeconds": 5, "value": 0}]}]`), "greater than the previous"},
		{"expansion value", body(twoTeams, `"expansions": [{"target": "teams[red].minPlayers", "steps": [{"waitTimeSeconds": 5, "value": "x"}]}]`), "must be a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.body)
			if err == nil {
				t.Fatalf("accepted %s", c.body)
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T, want *Error", err)
			}
			if !strings.HasPrefix(err.Error(), "Rule set is invalid: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestStripCommentsKeepsStrings(t *testing.T) {
	rs, err := Parse(`{"name": "a//b /* c */", "ruleLanguageVersion": "1.0", /* x */ "teams": [{"name": "t", "minPlayers": 1, "maxPlayers": 1}]} // end`)
	if err != nil || rs.Name != "a//b /* c */" {
		t.Fatalf("%v %+v", err, rs)
	}
}

func TestSmallMatchLimit(t *testing.T) {
	if _, err := Parse(body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 20, "quantity": 2}]`)); err != nil {
		t.Errorf("40 players with exhaustiveSearch: %v", err)
	}
	if _, err := Parse(body(`"teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 20, "quantity": 2}, {"name": "b", "minPlayers": 1, "maxPlayers": 1}]`)); err == nil {
		t.Error("41 players without balanced accepted")
	}
}
