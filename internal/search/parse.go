package search

import (
	"strconv"
	"strings"
)

// ParseFilter parses a FilterExpression. Precedence, tightest first:
// comparators, parentheses, NOT, AND, OR; AND and OR group left to right.
// Keywords and true/false are accepted in any case; strings in single or
// double quotes with backslash escapes. Errors (kind InvalidRequest) name
// the problem and its position: empty expression, unknown operand,
// unknown comparator, type mismatch, unbalanced parentheses, trailing input.
func ParseFilter(src string) (Expr, error) {
	p := &parser{lex: lexer{what: "FilterExpression", src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, p.lex.errorf(0, "empty expression")
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return e, nil
}

// ParseSort parses a SortExpression: one operand followed by ASC or DESC
// (any case).
func ParseSort(src string) (Sort, error) {
	p := &parser{lex: lexer{what: "SortExpression", src: src}}
	if err := p.advance(); err != nil {
		return Sort{}, err
	}
	if p.tok.kind == tokEOF {
		return Sort{}, p.lex.errorf(0, "empty expression")
	}
	o, err := p.operand()
	if err != nil {
		return Sort{}, err
	}
	var s Sort
	s.Operand = o
	switch {
	case p.keyword("ASC"):
	case p.keyword("DESC"):
		s.Desc = true
	case p.tok.kind == tokEOF:
		return Sort{}, p.lex.errorf(p.tok.pos, "missing sort order after %s: expected ASC or DESC", o)
	default:
		return Sort{}, p.lex.errorf(p.tok.pos, "bad sort order %q: expected ASC or DESC", p.tok.text)
	}
	if err := p.advance(); err != nil {
		return Sort{}, err
	}
	return s, p.end()
}

type parser struct {
	lex lexer
	tok token
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	p.tok = t
	return err
}

// keyword reports whether the current token is the word kw, in any case.
func (p *parser) keyword(kw string) bool {
	return p.tok.kind == tokWord && strings.EqualFold(p.tok.text, kw)
}

// end checks that nothing follows.
func (p *parser) end() error {
	switch p.tok.kind {
	case tokEOF:
		return nil
	case tokRParen:
		return p.lex.errorf(p.tok.pos, "unbalanced parentheses: ')' without '('")
	}
	return p.lex.errorf(p.tok.pos, "unexpected %s after the end of the expression", describe(p.tok))
}

func (p *parser) or() (Expr, error) {
	l, err := p.and()
	for err == nil && p.keyword("OR") {
		var r Expr
		if err = p.advance(); err == nil {
			if r, err = p.and(); err == nil {
				l = &Or{l, r}
			}
		}
	}
	return l, err
}

func (p *parser) and() (Expr, error) {
	l, err := p.not()
	for err == nil && p.keyword("AND") {
		var r Expr
		if err = p.advance(); err == nil {
			if r, err = p.not(); err == nil {
				l = &And{l, r}
			}
		}
	}
	return l, err
}

func (p *parser) not() (Expr, error) {
	if !p.keyword("NOT") {
		return p.primary()
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return &Not{x}, nil
}

func (p *parser) primary() (Expr, error) {
	if p.tok.kind != tokLParen {
		return p.cond()
	}
	open := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokRParen {
		return nil, p.lex.errorf(p.tok.pos, "empty parentheses")
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokRParen {
		if p.tok.kind == tokEOF {
			return nil, p.lex.errorf(open, "unbalanced parentheses: '(' never closed, opened")
		}
		return nil, p.lex.errorf(p.tok.pos, "expected AND, OR or ')' but found %s", describe(p.tok))
	}
	return e, p.advance()
}

// describe names a token for messages.
func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "the end of the expression"
	case tokString:
		return "string " + Quote(t.text)
	}
	return strconv.Quote(t.text)
}
