package ruleset

import (
	"encoding/json"
	"fmt"
)

// Rule is one rule. Which members are set depends on Type; numeric
// properties that expansions may relax are pointers (nil: not set).
type Rule struct {
	Name        string
	Description string
	Type        string

	// comparison, distance, collection
	Measurements []*Expr // a list: the results are concatenated
	Reference    *Reference
	Operation    string // comparison: < <= = != > >=; collection: intersection | contains | reference_intersection_count
	MinDistance  *float64
	MaxDistance  *float64 // distance, latency, batchDistance
	MinCount     *float64
	MaxCount     *float64

	// PartyAggregation: min | max | avg (default avg), or union |
	// intersection (collection, default union).
	PartyAggregation string

	// latency
	MaxLatency        *float64
	DistanceReference string // min | avg

	// absoluteSort, distanceSort
	SortDirection string // ascending | descending
	SortAttribute string
	MapKey        string // minValue | maxValue

	// batchDistance
	BatchAttribute string

	// compound
	Statement *Statement

	// Operand is set when a compound statement refers to this rule: it is
	// then enforced only through that statement.
	Operand bool
}

// Reference is a referenceValue: a property expression, a number, a
// string, or a list of strings.
type Reference struct {
	Expr    *Expr
	Number  *float64
	String  *string
	Strings []string
}

// Enforced reports whether the rule must hold on its own for a match:
// every rule except sorts, compound operands, and compound rules
// themselves (those are checked as statements).
func (r *Rule) Enforced() bool {
	return !r.Operand && r.Type != AbsoluteSort && r.Type != DistanceSort && r.Type != Compound
}

func (rs *RuleSet) parseRules(top object) *Error {
	items, e := top.list("rules", false)
	if e != nil {
		return e
	}
	for i, raw := range items {
		path := fmt.Sprintf("rules[%d]", i)
		o, e := decodeObject(path, raw)
		if e != nil {
			return e
		}
		r := &Rule{}
		if r.Name, e = o.str("name", true); e != nil {
			return e
		}
		if r.Name == "" {
			return errf(o.at("name"), "must not be empty")
		}
		o.path = fmt.Sprintf("rule %q (rules[%d])", r.Name, i)
		if _, dup := rs.rules[r.Name]; dup {
			return errf(o.path, "a rule of this name is already defined")
		}
		if r.Description, e = o.str("description", false); e != nil {
			return e
		}
		if r.Type, e = o.enum("type", true, Comparison, Distance, Collection, Latency, BatchDistance, AbsoluteSort, DistanceSort, Compound); e != nil {
			return e
		}
		if e := rs.parseRule(o, r); e != nil {
			return e
		}
		if rs.Large() && r.Type != Latency && r.Type != BatchDistance {
			return errf(o.path, "a large match (more than %d players) may only use latency and batchDistance rules, not %s", SmallMatchLimit, r.Type)
		}
		rs.Rules = append(rs.Rules, r)
		rs.rules[r.Name] = r
	}
	return nil
}

func (rs *RuleSet) parseRule(o object, r *Rule) *Error {
	switch r.Type {
	case Comparison:
		return rs.parseComparison(o, r)
	case Distance:
		return rs.parseDistance(o, r)
	case Collection:
		return rs.parseCollection(o, r)
	case Latency:
		return parseLatency(o, r)
	case BatchDistance:
		return rs.parseBatchDistance(o, r)
	case AbsoluteSort, DistanceSort:
		return rs.parseSort(o, r)
	default:
		return rs.parseCompound(o, r)
	}
}

func (rs *RuleSet) numberAggregation(o object, r *Rule) *Error {
	var e *Error
	if r.PartyAggregation, e = o.enum("partyAggregation", false, "min", "max", "avg"); e == nil && r.PartyAggregation == "" {
		r.PartyAggregation = "avg"
	}
	return e
}

func (rs *RuleSet) parseComparison(o object, r *Rule) *Error {
	var e *Error
	if r.Measurements, e = rs.measurements(o); e != nil {
		return e
	}
	if r.Operation, e = o.enum("operation", true, "<", "<=", "=", "!=", ">", ">="); e != nil {
		return e
	}
	if r.Reference, e = rs.reference(o, false); e != nil {
		return e
	}
	if r.Reference == nil && r.Operation != "=" && r.Operation != "!=" {
		return errf(o.path, "comparison without referenceValue allows only = and !=, not %s", r.Operation)
	}
	return rs.numberAggregation(o, r)
}

func (rs *RuleSet) parseDistance(o object, r *Rule) *Error {
	var e *Error
	if r.Measurements, e = rs.measurements(o); e != nil {
		return e
	}
	if r.Reference, e = rs.reference(o, true); e != nil {
		return e
	}
	if r.Reference.Expr == nil && r.Reference.Number == nil {
		return errf(o.at("referenceValue"), "distance rule needs a number or a property expression")
	}
	if r.MinDistance, e = o.num("minDistance", false); e != nil {
		return e
	}
	if r.MaxDistance, e = o.num("maxDistance", false); e != nil {
		return e
	}
	if r.MinDistance == nil && r.MaxDistance == nil {
		return errf(o.path, "distance rule requires maxDistance or minDistance")
	}
	return rs.numberAggregation(o, r)
}

func (rs *RuleSet) parseCollection(o object, r *Rule) *Error {
	var e *Error
	if r.Measurements, e = rs.measurements(o); e != nil {
		return e
	}
	if r.Operation, e = o.enum("operation", true, "intersection", "contains", "reference_intersection_count"); e != nil {
		return e
	}
	if r.Reference, e = rs.reference(o, r.Operation != "intersection"); e != nil {
		return e
	}
	if r.Reference != nil && r.Reference.Number != nil {
		return errf(o.at("referenceValue"), "collection rule needs a string, a list of strings or a property expression")
	}
	if r.MinCount, e = o.num("minCount", false); e != nil {
		return e
	}
	if r.MaxCount, e = o.num("maxCount", false); e != nil {
		return e
	}
	if r.MinCount == nil && r.MaxCount == nil {
		return errf(o.path, "collection rule requires minCount or maxCount")
	}
	if r.PartyAggregation, e = o.enum("partyAggregation", false, "union", "intersection"); e == nil && r.PartyAggregation == "" {
		r.PartyAggregation = "union"
	}
	return e
}

func parseLatency(o object, r *Rule) *Error {
	var e *Error
	if r.MaxLatency, e = o.num("maxLatency", true); e != nil {
		return e
	}
	if r.MaxDistance, e = o.num("maxDistance", false); e != nil {
		return e
	}
	if r.DistanceReference, e = o.enum("distanceReference", false, "min", "avg"); e != nil {
		return e
	}
	if r.PartyAggregation, e = o.enum("partyAggregation", false, "min", "max", "avg"); e == nil && r.PartyAggregation == "" {
		r.PartyAggregation = "avg"
	}
	return e
}

func (rs *RuleSet) parseBatchDistance(o object, r *Rule) *Error {
	var e *Error
	if r.BatchAttribute, e = o.str("batchAttribute", true); e != nil {
		return e
	}
	a, ok := rs.attrs[r.BatchAttribute]
	if !ok {
		return errf(o.at("batchAttribute"), "attribute %q is not declared in playerAttributes", r.BatchAttribute)
	}
	if r.MaxDistance, e = o.num("maxDistance", false); e != nil {
		return e
	}
	switch {
	case a.Type == TypeNumber && r.MaxDistance == nil:
		return errf(o.path, "batchDistance rule on number attribute %q requires maxDistance", a.Name)
	case a.Type != TypeNumber && a.Type != TypeString:
		return errf(o.at("batchAttribute"), "attribute %q must be of type number or string", a.Name)
	}
	return rs.numberAggregation(o, r)
}

func (rs *RuleSet) parseSort(o object, r *Rule) *Error {
	var e *Error
	if r.SortDirection, e = o.enum("sortDirection", true, "ascending", "descending"); e != nil {
		return e
	}
	if r.SortAttribute, e = o.str("sortAttribute", true); e != nil {
		return e
	}
	a, ok := rs.attrs[r.SortAttribute]
	if !ok {
		return errf(o.at("sortAttribute"), "attribute %q is not declared in playerAttributes", r.SortAttribute)
	}
	if r.MapKey, e = o.enum("mapKey", false, "minValue", "maxValue"); e != nil {
		return e
	}
	switch {
	case r.MapKey != "" && a.Type != TypeStringNumberMap:
		return errf(o.at("mapKey"), "only for string_number_map attributes; %q is %s", a.Name, a.Type)
	case a.Type == TypeStringList:
		return errf(o.at("sortAttribute"), "attribute %q is a string_list and cannot be sorted", a.Name)
	}
	return rs.numberAggregation(o, r)
}

func (rs *RuleSet) parseCompound(o object, r *Rule) *Error {
	text, e := o.str("statement", true)
	if e != nil {
		return e
	}
	st, err := ParseStatement(text)
	if err != nil {
		return errf(o.at("statement"), "%s", err.Error())
	}
	if rs.Large() {
		return errf(o.path, "compound rules are only allowed for matches of %d players or fewer", SmallMatchLimit)
	}
	for _, name := range st.Rules() {
		op, ok := rs.rules[name]
		switch {
		case !ok:
			return errf(o.at("statement"), "rule %q is not defined before this rule", name)
		case op.Type == BatchDistance:
			return errf(o.at("statement"), "batchDistance rule %q cannot be part of a compound statement", name)
		case op.Type == AbsoluteSort || op.Type == DistanceSort:
			return errf(o.at("statement"), "sort rule %q cannot be part of a compound statement", name)
		}
		op.Operand = true
	}
	r.Statement = st
	return nil
}

// measurements reads the required measurements member: one expression
// string, or a list of them.
func (rs *RuleSet) measurements(o object) ([]*Expr, *Error) {
	if !o.has("measurements") {
		return nil, errf(o.path, "measurements is required")
	}
	var texts []string
	var one string
	if err := json.Unmarshal(o.m["measurements"], &one); err == nil {
		texts = []string{one}
	} else if err := json.Unmarshal(o.m["measurements"], &texts); err != nil || len(texts) == 0 {
		return nil, errf(o.at("measurements"), "must be a property expression or a non-empty list of them")
	}
	var out []*Expr
	for _, t := range texts {
		x, e := rs.expr(o.at("measurements"), t)
		if e != nil {
			return nil, e
		}
		out = append(out, x)
	}
	return out, nil
}

// reference reads referenceValue: an expression string, a number or
// numeric string, a plain string, or a list of strings.
func (rs *RuleSet) reference(o object, required bool) (*Reference, *Error) {
	if !o.has("referenceValue") {
		if required {
			return nil, errf(o.path, "referenceValue is required")
		}
		return nil, nil
	}
	raw, path := o.m["referenceValue"], o.at("referenceValue")
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if looksLikeExpr(s) {
			x, e := rs.expr(path, s)
			return &Reference{Expr: x}, e
		}
		if f, ok := number(raw); ok {
			return &Reference{Number: &f, String: &s}, nil
		}
		return &Reference{String: &s}, nil
	}
	if f, ok := number(raw); ok {
		return &Reference{Number: &f}, nil
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil && l != nil {
		return &Reference{Strings: l}, nil
	}
	return nil, errf(path, "must be a number, a string, a list of strings or a property expression")
}

// expr parses a property expression and checks the teams and attributes
// it names.
func (rs *RuleSet) expr(path, text string) (*Expr, *Error) {
	x, err := ParseExpr(text)
	if err != nil {
		return nil, errf(path, "%s", err.Error())
	}
	var bad *Error
	x.walkPaths(func(p *Expr) {
		n := 0
		for _, t := range p.Teams {
			idx := rs.InstancesOf(t)
			if len(idx) == 0 && bad == nil {
				bad = errf(path, "team %q in %q is not defined in teams", t, text)
			}
			n += len(idx)
		}
		p.Grouped = p.AllTeams || n > 1 || len(p.Teams) > 1
		if p.Select == SelectAttributes {
			if _, ok := rs.attrs[p.Attribute]; !ok && bad == nil {
				bad = errf(path, "attribute %q in %q is not declared in playerAttributes", p.Attribute, text)
			}
		}
	})
	return x, bad
}
