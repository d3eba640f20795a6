package ruleset

import (
	"fmt"
	"regexp"
	"sort"
)

// Expansion relaxes one numeric property as tickets wait.
type Expansion struct {
	Target Target
	Steps  []Step // waitTimeSeconds strictly increasing
}

// Target is what an expansion changes: Rule's Property
// ("rules[<name>].<property>") or, when Team is set, that team's (or every
// instance of that base team's) minPlayers or maxPlayers.
type Target struct {
	Rule     string
	Team     string
	Property string
	Text     string
}

// Step is one expansion step: from WaitSeconds of age on, Value applies.
type Step struct {
	WaitSeconds float64
	Value       float64
}

// ValueAt returns the value of the last step whose wait time has been
// reached at age seconds, and whether any has.
func (e *Expansion) ValueAt(age float64) (float64, bool) {
	i := sort.Search(len(e.Steps), func(i int) bool { return e.Steps[i].WaitSeconds > age })
	if i == 0 {
		return 0, false
	}
	return e.Steps[i-1].Value, true
}

var targetRE = regexp.MustCompile(`^\s*(rules|teams)\[([^\]]+)\]\.([A-Za-z]+)\s*$`)

// expandable lists, per rule type, the numeric properties an expansion may
// target.
var expandable = map[string][]string{
	Comparison:    {"referenceValue"},
	Distance:      {"referenceValue", "minDistance", "maxDistance"},
	Collection:    {"minCount", "maxCount"},
	Latency:       {"maxLatency", "maxDistance"},
	BatchDistance: {"maxDistance"},
}

func (rs *RuleSet) parseExpansions(top object) *Error {
	items, e := top.list("expansions", false)
	if e != nil {
		return e
	}
	for i, raw := range items {
		path := fmt.Sprintf("expansions[%d]", i)
		o, e := decodeObject(path, raw)
		if e != nil {
			return e
		}
		text, e := o.str("target", true)
		if e != nil {
			return e
		}
		o.path = fmt.Sprintf("expansion %q (%s)", text, path)
		x := Expansion{}
		if x.Target, e = rs.target(o, text); e != nil {
			return e
		}
		if x.Steps, e = parseSteps(o); e != nil {
			return e
		}
		rs.Expansions = append(rs.Expansions, x)
	}
	return nil
}

func (rs *RuleSet) target(o object, text string) (Target, *Error) {
	m := targetRE.FindStringSubmatch(text)
	if m == nil {
		return Target{}, errf(o.at("target"), "must be rules[<rule>].<property> or teams[<team>].minPlayers|maxPlayers")
	}
	t := Target{Property: m[3], Text: text}
	if m[1] == "teams" {
		t.Team = m[2]
		if len(rs.InstancesOf(t.Team)) == 0 {
			return t, errf(o.at("target"), "team %q is not defined in teams", t.Team)
		}
		if t.Property != "minPlayers" && t.Property != "maxPlayers" {
			return t, errf(o.at("target"), "a team expansion may change minPlayers or maxPlayers, not %s", t.Property)
		}
		return t, nil
	}
	t.Rule = m[2]
	r, ok := rs.rules[t.Rule]
	if !ok {
		return t, errf(o.at("target"), "rule %q is not defined in rules", t.Rule)
	}
	if r.Type == Compound {
		return t, errf(o.at("target"), "compound rule %q cannot be expanded (its operands can)", t.Rule)
	}
	for _, p := range expandable[r.Type] {
		if p == t.Property {
			if p == "referenceValue" && (r.Reference == nil || r.Reference.Number == nil) {
				return t, errf(o.at("target"), "rule %q has no numeric referenceValue to expand", t.Rule)
			}
			return t, nil
		}
	}
	return t, errf(o.at("target"), "%s rule %q has no expandable property %s", r.Type, t.Rule, t.Property)
}

func parseSteps(o object) ([]Step, *Error) {
	items, e := o.list("steps", true)
	if e != nil {
		return nil, e
	}
	if len(items) == 0 {
		return nil, errf(o.at("steps"), "at least one step is required")
	}
	var steps []Step
	for i, raw := range items {
		so, e := decodeObject(fmt.Sprintf("%s.steps[%d]", o.path, i), raw)
		if e != nil {
			return nil, e
		}
		w, e := so.integer("waitTimeSeconds", true, 0)
		if e != nil {
			return nil, e
		}
		v, e := so.num("value", true)
		if e != nil {
			return nil, e
		}
		if w < 0 {
			return nil, errf(so.at("waitTimeSeconds"), "must not be negative")
		}
		if i > 0 && float64(w) <= steps[i-1].WaitSeconds {
			return nil, errf(so.at("waitTimeSeconds"), "must be greater than the previous step's (%g)", steps[i-1].WaitSeconds)
		}
		steps = append(steps, Step{WaitSeconds: float64(w), Value: *v})
	}
	return steps, nil
}
