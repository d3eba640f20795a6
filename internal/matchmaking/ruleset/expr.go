package ruleset

import (
	"fmt"
	"strings"
)

// Aggregation functions of property expressions.
var aggregations = map[string]bool{
	"min": true, "max": true, "avg": true, "median": true, "sum": true, "stddev": true,
	"count": true, "flatten": true, "set_intersection": true,
}

// Select says what a team path yields.
type Select int

const (
	SelectTeams      Select = iota // teams[x]: the teams (as their players)
	SelectPlayers                  // teams[x].players
	SelectPlayerIDs                // teams[x].players[playerId]
	SelectAttributes               // teams[x].players.attributes[a]
)

// Expr is a parsed property expression: an aggregation Func applied to Arg,
// or (Func == "") a team path.
type Expr struct {
	Func string
	Arg  *Expr

	AllTeams  bool     // teams[*]
	Teams     []string // teams[a,b] as written (base or instance names)
	Select    Select
	Attribute string // with SelectAttributes
	// Grouped is set by validation: the path yields one sub-list per team
	// (teams[*], several names, or a base name with quantity > 1).
	Grouped bool

	Text string // the source text
}

// String returns the expression as written.
func (e *Expr) String() string { return e.Text }

// looksLikeExpr reports whether a referenceValue string is meant as a
// property expression rather than a literal.
func looksLikeExpr(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "teams[") || strings.HasPrefix(t, "team[") {
		return true
	}
	if i := strings.IndexByte(t, '('); i > 0 {
		return aggregations[strings.TrimSpace(t[:i])]
	}
	return false
}

// ParseExpr parses a property expression.
func ParseExpr(s string) (*Expr, error) {
	p := &exprParser{s: s}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at offset %d in expression %q", p.s[p.i:], p.i, s)
	}
	return e, nil
}

type exprParser struct {
	s     string
	i     int
	depth int
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *exprParser) ident() string {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *exprParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *exprParser) fail(what string) error {
	return fmt.Errorf("expected %s at offset %d in expression %q", what, p.i, p.s)
}

func (p *exprParser) expr() (*Expr, error) {
	start := p.i
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 32 {
		return nil, fmt.Errorf("expression %q is nested too deeply", p.s)
	}
	name := p.ident()
	switch {
	case name == "teams" || name == "team":
		e, err := p.path()
		if err != nil {
			return nil, err
		}
		e.Text = strings.TrimSpace(p.s[start:p.i])
		return e, nil
	case aggregations[name]:
		if !p.eat("(") {
			return nil, p.fail("'(' after " + name)
		}
		arg, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, p.fail("')'")
		}
		return &Expr{Func: name, Arg: arg, Text: strings.TrimSpace(p.s[start:p.i])}, nil
	case name == "":
		return nil, p.fail("teams[...] or an aggregation function")
	default:
		return nil, fmt.Errorf("unknown function or property %q in expression %q", name, p.s)
	}
}

// path parses what follows "teams".
func (p *exprParser) path() (*Expr, error) {
	e := &Expr{Select: SelectTeams}
	sel, err := p.bracket()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(sel) == "*" {
		e.AllTeams = true
	} else {
		for _, n := range strings.Split(sel, ",") {
			n = strings.TrimSpace(n)
			if n == "" || n == "*" {
				return nil, fmt.Errorf("bad team list [%s] in expression %q", sel, p.s)
			}
			e.Teams = append(e.Teams, n)
		}
	}
	if !p.eat(".") {
		return e, nil
	}
	if p.ident() != "players" {
		return nil, p.fail("players")
	}
	e.Select = SelectPlayers
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '[' {
		key, err := p.bracket()
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(strings.TrimSpace(key), "playerId") {
			return nil, fmt.Errorf("players[%s] in expression %q: only players[playerId] is allowed", key, p.s)
		}
		e.Select = SelectPlayerIDs
		return e, nil
	}
	if !p.eat(".") {
		return e, nil
	}
	if p.ident() != "attributes" {
		return nil, p.fail("attributes")
	}
	attr, err := p.bracket()
	if err != nil {
		return nil, err
	}
	e.Select, e.Attribute = SelectAttributes, strings.TrimSpace(attr)
	if e.Attribute == "" {
		return nil, fmt.Errorf("empty attribute name in expression %q", p.s)
	}
	return e, nil
}

// bracket reads "[...]" and returns the text inside.
func (p *exprParser) bracket() (string, error) {
	if !p.eat("[") {
		return "", p.fail("'['")
	}
	end := strings.IndexByte(p.s[p.i:], ']')
	if end < 0 {
		return "", p.fail("']'")
	}
	in := p.s[p.i : p.i+end]
	p.i += end + 1
	return in, nil
}

// walkPaths calls fn for every team path in e.
func (e *Expr) walkPaths(fn func(*Expr)) {
	for ; e != nil; e = e.Arg {
		if e.Func == "" {
			fn(e)
		}
	}
}
