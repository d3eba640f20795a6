package ruleset

import (
	"fmt"
	"strings"
)

// Statement is a parsed compound rule statement: Op ("and", "or", "not",
// "xor") over Args, or (Op == "") a reference to the rule named Rule.
type Statement struct {
	Op   string
	Args []*Statement
	Rule string
}

// ParseStatement parses a compound statement such as
// "or(and(A, B), not(C))". and/or take two or more operands, not exactly
// one, xor exactly two.
func ParseStatement(s string) (*Statement, error) {
	p := &exprParser{s: s}
	st, err := parseStmt(p, 0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at offset %d in statement %q", p.s[p.i:], p.i, s)
	}
	return st, nil
}

func parseStmt(p *exprParser, depth int) (*Statement, error) {
	if depth > 32 {
		return nil, fmt.Errorf("statement %q is nested too deeply", p.s)
	}
	p.space()
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("(),", p.s[p.i]) < 0 {
		p.i++
	}
	name := strings.TrimSpace(p.s[start:p.i])
	if name == "" {
		return nil, p.fail("a rule name or and/or/not/xor")
	}
	op := strings.ToLower(name)
	if op != "and" && op != "or" && op != "not" && op != "xor" {
		if strings.ContainsAny(name, " \t\r\n") {
			return nil, fmt.Errorf("bad rule name %q in statement %q", name, p.s)
		}
		return &Statement{Rule: name}, nil
	}
	if !p.eat("(") {
		return nil, p.fail("'(' after " + op)
	}
	st := &Statement{Op: op}
	for {
		arg, err := parseStmt(p, depth+1)
		if err != nil {
			return nil, err
		}
		st.Args = append(st.Args, arg)
		if p.eat(")") {
			break
		}
		if !p.eat(",") {
			return nil, p.fail("',' or ')'")
		}
	}
	n := len(st.Args)
	if (op == "and" || op == "or") && n < 2 || op == "not" && n != 1 || op == "xor" && n != 2 {
		return nil, fmt.Errorf("%s takes %s operands, got %d in statement %q", op,
			map[string]string{"and": "two or more", "or": "two or more", "not": "exactly one", "xor": "exactly two"}[op], n, p.s)
	}
	return st, nil
}

// Rules returns the names of the rules the statement refers to.
func (s *Statement) Rules() []string {
	if s.Op == "" {
		return []string{s.Rule}
	}
	var out []string
	for _, a := range s.Args {
		out = append(out, a.Rules()...)
	}
	return out
}

// Eval evaluates the statement given each operand rule's outcome.
func (s *Statement) Eval(pass func(rule string) bool) bool {
	switch s.Op {
	case "":
		return pass(s.Rule)
	case "not":
		return !s.Args[0].Eval(pass)
	case "xor":
		return s.Args[0].Eval(pass) != s.Args[1].Eval(pass)
	case "and":
		for _, a := range s.Args {
			if !a.Eval(pass) {
				return false
			}
		}
		return true
	default: // or
		for _, a := range s.Args {
			if a.Eval(pass) {
				return true
			}
		}
		return false
	}
}
