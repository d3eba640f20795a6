// Package ruleset is the FlexMatch rule set language: Parse loads and
// validates a rule set body into a RuleSet that
// the matcher evaluates. It is pure and uses the standard library only.
//
// The loader is lenient where GameLift's own published examples are:
// `measurements` may be a string or a list, numbers may be numeric
// strings, `//` and `/* */` comments are removed, duplicate keys keep the
// last value. Everything else that is wrong is an *Error naming the member
// (and rule) at fault.
package ruleset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the language (spec §4.1, §4.12).
const (
	MaxBodyLength   = 65535
	MaxMatchPlayers = 200 // Σ maxPlayers × quantity
	SmallMatchLimit = 40  // larger matches are "large" and need the balanced strategy
)

// Attribute types (spec §4.2).
const (
	TypeString          = "string"
	TypeNumber          = "number"
	TypeStringList      = "string_list"
	TypeStringNumberMap = "string_number_map"
)

// Rule types (spec §4.6).
const (
	Comparison    = "comparison"
	Distance      = "distance"
	Collection    = "collection"
	Latency       = "latency"
	BatchDistance = "batchDistance"
	AbsoluteSort  = "absoluteSort"
	DistanceSort  = "distanceSort"
	Compound      = "compound"
)

// Algorithm values (spec §4.3).
const (
	Exhaustive = "exhaustiveSearch"
	Balanced   = "balanced"
)

// RuleSet is a loaded, valid rule set.
type RuleSet struct {
	Name       string
	Attributes []Attribute
	Teams      []Team     // definitions as written
	Instances  []Instance // teams after quantity expansion, in order
	Algorithm  Algorithm
	Rules      []*Rule
	Expansions []Expansion

	attrs map[string]*Attribute
	rules map[string]*Rule
}

// Attribute is a declared player attribute.
type Attribute struct {
	Name    string
	Type    string
	Default *Value // nil: a player without it cannot be matched
}

// Value is an attribute value of one of the four types.
type Value struct {
	Type string
	S    string
	N    float64
	SL   []string
	SDM  map[string]float64
}

// Team is a team definition.
type Team struct {
	Name       string
	MinPlayers int
	MaxPlayers int
	Quantity   int
}

// Instance is one team of a match: a definition with quantity 1 keeps its
// name; with quantity n > 1 the instances are <name>_1 … <name>_n.
type Instance struct {
	Name       string
	Base       string
	MinPlayers int
	MaxPlayers int
}

// Algorithm holds the algorithm block with defaults filled in.
type Algorithm struct {
	Strategy              string // exhaustiveSearch | balanced
	BatchingPreference    string // random | sorted | largestPopulation | fastestRegion
	SortByAttributes      []string
	BalancedAttribute     string
	ExpansionAgeSelection string // newest | oldest
	BackfillPriority      string // normal | low | high
}

// Capacity is Σ maxPlayers over all team instances.
func (rs *RuleSet) Capacity() int {
	n := 0
	for _, t := range rs.Instances {
		n += t.MaxPlayers
	}
	return n
}

// Large reports whether matches exceed 40 players.
func (rs *RuleSet) Large() bool { return rs.Capacity() > SmallMatchLimit }

// Attribute returns the declared attribute of that name.
func (rs *RuleSet) Attribute(name string) (*Attribute, bool) {
	a, ok := rs.attrs[name]
	return a, ok
}

// Rule returns the rule of that name.
func (rs *RuleSet) Rule(name string) (*Rule, bool) {
	r, ok := rs.rules[name]
	return r, ok
}

// InstancesOf returns the instances a name in a team path or expansion
// target denotes: the instance of that name, or every instance of that
// base definition.
func (rs *RuleSet) InstancesOf(name string) []int {
	var out []int
	for i, t := range rs.Instances {
		if t.Name == name {
			return []int{i}
		}
		if t.Base == name {
			out = append(out, i)
		}
	}
	return out
}

// Parse loads and validates a rule set body. The error, if any, is an
// *Error (never a typed nil: parse's *Error is converted here).
func Parse(body string) (*RuleSet, error) {
	rs, err := parse(body)
	if err != nil {
		return nil, err
	}
	return rs, nil
}

func parse(body string) (*RuleSet, *Error) {
	if len(body) == 0 || utf8.RuneCountInString(body) > MaxBodyLength {
		return nil, errf("", "body must be 1 to %d characters", MaxBodyLength)
	}
	raw := stripComments([]byte(body))
	var top json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, errf("", "not valid JSON: %s", jsonReason(err))
	}
	o, e := decodeObject("", top)
	if e != nil {
		return nil, &Error{Reason: "the body must be a JSON object", NotObject: true}
	}
	rs := &RuleSet{attrs: map[string]*Attribute{}, rules: map[string]*Rule{}}
	if rs.Name, e = o.str("name", false); e != nil {
		return nil, e
	}
	v, e := o.str("ruleLanguageVersion", true)
	if e != nil {
		return nil, e
	}
	if v != "1.0" {
		return nil, errf("ruleLanguageVersion", "must be \"1.0\", not %q", v)
	}
	for _, step := range []func(object) *Error{rs.parseAttributes, rs.parseTeams, rs.parseAlgorithm, rs.parseRules, rs.parseExpansions} {
		if e := step(o); e != nil {
			return nil, e
		}
	}
	return rs, nil
}

// jsonReason words a JSON syntax error without Go type names.
func jsonReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at offset %d)", se.Error(), se.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func (rs *RuleSet) parseAttributes(o object) *Error {
	items, e := o.list("playerAttributes", false)
	if e != nil {
		return e
	}
	for i, raw := range items {
		a, e := parseAttribute(fmt.Sprintf("playerAttributes[%d]", i), raw)
		if e != nil {
			return e
		}
		if _, dup := rs.attrs[a.Name]; dup {
			return errf(fmt.Sprintf("playerAttributes[%d]", i), "attribute %q is declared twice", a.Name)
		}
		rs.Attributes = append(rs.Attributes, a)
		rs.attrs[a.Name] = &rs.Attributes[len(rs.Attributes)-1]
	}
	// Re-point after appends may have moved the backing array.
	for i := range rs.Attributes {
		rs.attrs[rs.Attributes[i].Name] = &rs.Attributes[i]
	}
	return nil
}

func parseAttribute(path string, raw json.RawMessage) (Attribute, *Error) {
	o, e := decodeObject(path, raw)
	if e != nil {
		return Attribute{}, e
	}
	var a Attribute
	if a.Name, e = o.str("name", true); e != nil {
		return a, e
	}
	if a.Name == "" {
		return a, errf(o.at("name"), "must not be empty")
	}
	o.path = fmt.Sprintf("%s %q", path, a.Name)
	if a.Type, e = o.enum("type", true, TypeString, TypeNumber, TypeStringList, TypeStringNumberMap); e != nil {
		return a, e
	}
	if o.has("default") {
		d, ok := parseValue(a.Type, o.m["default"])
		if !ok {
			return a, errf(o.at("default"), "is not a valid %s value", a.Type)
		}
		a.Default = &d
	}
	return a, nil
}

// parseValue reads a JSON value of the given attribute type; a number may
// be a numeric string.
func parseValue(typ string, raw json.RawMessage) (Value, bool) {
	v := Value{Type: typ}
	var err error
	switch typ {
	case TypeString:
		err = json.Unmarshal(raw, &v.S)
	case TypeNumber:
		var ok bool
		if v.N, ok = number(raw); !ok {
			return v, false
		}
	case TypeStringList:
		err = json.Unmarshal(raw, &v.SL)
		if v.SL == nil {
			v.SL = []string{}
		}
	case TypeStringNumberMap:
		err = json.Unmarshal(raw, &v.SDM)
		if v.SDM == nil {
			v.SDM = map[string]float64{}
		}
	}
	return v, err == nil && !isNull(raw)
}

func (rs *RuleSet) parseTeams(o object) *Error {
	items, e := o.list("teams", true)
	if e != nil {
		return e
	}
	if len(items) == 0 {
		return errf("teams", "at least one team is required")
	}
	names := map[string]bool{}
	for i, raw := range items {
		t, e := parseTeam(fmt.Sprintf("teams[%d]", i), raw)
		if e != nil {
			return e
		}
		rs.Teams = append(rs.Teams, t)
		for q := 1; q <= t.Quantity; q++ {
			name := t.Name
			if t.Quantity > 1 {
				name = fmt.Sprintf("%s_%d", t.Name, q)
			}
			if names[name] {
				return errf(fmt.Sprintf("teams[%d] %q", i, t.Name), "team name %q is used twice", name)
			}
			names[name] = true
			rs.Instances = append(rs.Instances, Instance{Name: name, Base: t.Name, MinPlayers: t.MinPlayers, MaxPlayers: t.MaxPlayers})
		}
		if len(rs.Instances) > MaxMatchPlayers {
			break // the capacity check below reports it
		}
	}
	for _, t := range rs.Teams {
		if t.Quantity > 1 && names[t.Name] {
			return errf("teams", "team name %q is also the name of another team's instance", t.Name)
		}
	}
	if c := rs.Capacity(); c > MaxMatchPlayers {
		return errf("teams", "teams hold %d players; a match may hold at most %d", c, MaxMatchPlayers)
	}
	return nil
}

func parseTeam(path string, raw json.RawMessage) (Team, *Error) {
	o, e := decodeObject(path, raw)
	if e != nil {
		return Team{}, e
	}
	var t Team
	if t.Name, e = o.str("name", true); e != nil {
		return t, e
	}
	if t.Name == "" || strings.ContainsAny(t.Name, "[],*") {
		return t, errf(o.at("name"), "%q is not a usable team name", t.Name)
	}
	o.path = fmt.Sprintf("%s %q", path, t.Name)
	if t.MaxPlayers, e = o.integer("maxPlayers", true, 0); e != nil {
		return t, e
	}
	if t.MinPlayers, e = o.integer("minPlayers", true, 0); e != nil {
		return t, e
	}
	if t.Quantity, e = o.integer("quantity", false, 1); e != nil {
		return t, e
	}
	switch {
	case t.MaxPlayers < 1 || t.MaxPlayers > MaxMatchPlayers:
		return t, errf(o.at("maxPlayers"), "must be 1 to %d", MaxMatchPlayers)
	case t.MinPlayers < 0 || t.MinPlayers > t.MaxPlayers:
		return t, errf(o.at("minPlayers"), "must be 0 to maxPlayers (%d)", t.MaxPlayers)
	case t.Quantity < 1 || t.Quantity > MaxMatchPlayers:
		return t, errf(o.at("quantity"), "must be 1 to %d", MaxMatchPlayers)
	}
	return t, nil
}

func (rs *RuleSet) parseAlgorithm(top object) *Error {
	a := Algorithm{Strategy: Exhaustive, ExpansionAgeSelection: "newest", BackfillPriority: "normal"}
	if top.has("algorithm") {
		o, e := decodeObject("algorithm", top.m["algorithm"])
		if e != nil {
			return e
		}
		if e := readAlgorithm(o, &a); e != nil {
			return e
		}
	}
	if a.BatchingPreference == "" {
		a.BatchingPreference = map[string]string{Exhaustive: "random", Balanced: "largestPopulation"}[a.Strategy]
	}
	if e := rs.checkAlgorithm(&a); e != nil {
		return e
	}
	rs.Algorithm = a
	return nil
}

func readAlgorithm(o object, a *Algorithm) *Error {
	var e *Error
	if s, e := o.enum("strategy", false, Exhaustive, Balanced); e != nil {
		return e
	} else if s != "" {
		a.Strategy = s
	}
	if a.BatchingPreference, e = o.enum("batchingPreference", false, "random", "sorted", "largestPopulation", "fastestRegion"); e != nil {
		return e
	}
	if a.SortByAttributes, e = o.strings("sortByAttributes"); e != nil {
		return e
	}
	if a.BalancedAttribute, e = o.str("balancedAttribute", false); e != nil {
		return e
	}
	if s, e := o.enum("expansionAgeSelection", false, "newest", "oldest"); e != nil {
		return e
	} else if s != "" {
		a.ExpansionAgeSelection = s
	}
	if s, e := o.enum("backfillPriority", false, "normal", "low", "high"); e != nil {
		return e
	} else if s != "" {
		a.BackfillPriority = s
	}
	return nil
}

func (rs *RuleSet) checkAlgorithm(a *Algorithm) *Error {
	bp := a.BatchingPreference
	if a.Strategy == Exhaustive && (bp == "largestPopulation" || bp == "fastestRegion") ||
		a.Strategy == Balanced && (bp == "random" || bp == "sorted") {
		return errf("algorithm.batchingPreference", "%q cannot be used with strategy %q", bp, a.Strategy)
	}
	if len(a.SortByAttributes) > 0 && bp != "sorted" {
		return errf("algorithm.sortByAttributes", "needs batchingPreference \"sorted\"")
	}
	for _, n := range a.SortByAttributes {
		if _, ok := rs.attrs[n]; !ok {
			return errf("algorithm.sortByAttributes", "attribute %q is not declared in playerAttributes", n)
		}
	}
	if a.Strategy == Balanced {
		if a.BalancedAttribute == "" {
			return errf("algorithm", "strategy \"balanced\" requires balancedAttribute")
		}
		if at, ok := rs.attrs[a.BalancedAttribute]; !ok || at.Type != TypeNumber {
			return errf("algorithm.balancedAttribute", "%q must be a declared attribute of type number", a.BalancedAttribute)
		}
	}
	if rs.Large() && a.Strategy != Balanced {
		return errf("algorithm", "teams hold %d players (more than %d): a large match needs strategy \"balanced\"", rs.Capacity(), SmallMatchLimit)
	}
	return nil
}
