package search

import (
	"fmt"
	"strconv"
	"strings"
)

// operand reads an operand name.
func (p *parser) operand() (Operand, error) {
	t := p.tok
	if t.kind != tokWord {
		return Operand{}, p.lex.errorf(t.pos, "expected an operand but found %s", describe(t))
	}
	var o Operand
	if key, ok := strings.CutPrefix(t.text, PropertyPrefix); ok {
		if key == "" {
			return Operand{}, p.lex.errorf(t.pos, "missing property key after %q", PropertyPrefix)
		}
		o = Operand{Field: Property, Key: key}
	} else if f, ok := fieldNames[t.text]; ok {
		o = Operand{Field: f}
	} else {
		return Operand{}, p.lex.errorf(t.pos, "unknown operand %q (operands: %s)", t.text, operandList)
	}
	return o, p.advance()
}

// cond reads operand comparator value and checks the value's type.
func (p *parser) cond() (Expr, error) {
	if p.tok.kind == tokEOF {
		return nil, p.lex.errorf(p.tok.pos, "expected a condition but found the end of the expression")
	}
	o, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokComp {
		return nil, p.lex.errorf(p.tok.pos, "expected a comparator (= <> < > <= >=) after %s but found %s", o, describe(p.tok))
	}
	c := &Cond{Operand: o, Op: Comparator(p.tok.text)}
	kind := o.Field.Kind()
	if kind != Number && c.Op != Eq && c.Op != Ne {
		return nil, p.lex.errorf(p.tok.pos, "%s compares %s values, which allow only = and <>, not %s", o, kindName(kind), c.Op)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.value(c, kind); err != nil {
		return nil, err
	}
	return c, p.advance()
}

// value reads the value of c, which must be of kind.
func (p *parser) value(c *Cond, kind Kind) error {
	t := p.tok
	got, err := p.valueKind(t)
	if err != nil {
		return err
	}
	if got != kind {
		hint := ""
		if kind == String && got == Number {
			hint = fmt.Sprintf(" (property values are strings: quote it, as '%s')", t.text)
		}
		return p.lex.errorf(t.pos, "type mismatch: %s compares %s values but %s is a %s%s", c.Operand, kindName(kind), describe(t), kindName(got), hint)
	}
	switch kind {
	case String:
		c.Str = t.text
	case Bool:
		c.Bool = strings.EqualFold(t.text, "true")
	case Number:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return p.lex.errorf(t.pos, "number %s is out of range", t.text)
		}
		c.Num = n
	}
	return nil
}

// valueKind classifies a value token.
func (p *parser) valueKind(t token) (Kind, error) {
	switch {
	case t.kind == tokString:
		return String, nil
	case t.kind != tokWord:
		return 0, p.lex.errorf(t.pos, "expected a value but found %s", describe(t))
	case strings.EqualFold(t.text, "true") || strings.EqualFold(t.text, "false"):
		return Bool, nil
	case isInteger(t.text):
		return Number, nil
	case isDecimal(t.text):
		return 0, p.lex.errorf(t.pos, "number %s must be a whole number", t.text)
	}
	return 0, p.lex.errorf(t.pos, "expected a value (a number, true, false or a quoted string) but found %s", describe(t))
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isDecimal(s string) bool {
	whole, frac, ok := strings.Cut(s, ".")
	return ok && isInteger(whole) && (frac == "" || isInteger(frac) && frac[0] != '-')
}

func kindName(k Kind) string {
	switch k {
	case Number:
		return "number"
	case Bool:
		return "boolean"
	}
	return "string"
}
