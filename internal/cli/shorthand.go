package cli

import (
	"fmt"
	"strings"
)

// parseShorthand reads the aws CLI's shorthand syntax for a structure or a
// map: comma-separated Key=Value pairs, where a value is a bare word (up to
// the next comma or closing bracket), a quoted string ('…' or "…", with \
// escaping the quote), a list [a,b,c] or a nested structure {K=V,…}.
//
//	Key=a,Value=b
//	Location=custom-home,Tags=[x,y],Policy={Period=5,Count=2}
//
// The result holds only map[string]any, []any and string; the caller gives
// the strings their types from the target shape.
func parseShorthand(s string) (map[string]any, error) {
	p := &shorthandParser{s: s}
	m, err := p.pairs(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, p.errorf("unexpected %q", p.s[p.i])
	}
	return m, nil
}

type shorthandParser struct {
	s string
	i int
}

const maxShorthandDepth = 32

func (p *shorthandParser) errorf(format string, args ...any) error {
	return fmt.Errorf("error parsing shorthand at character %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

// pairs reads Key=Value pairs up to the end or a closing '}'.
func (p *shorthandParser) pairs(depth int) (map[string]any, error) {
	if depth > maxShorthandDepth {
		return nil, p.errorf("nested too deeply")
	}
	m := map[string]any{}
	for {
		p.space()
		key := p.word("=,[]{}")
		if key == "" {
			return nil, p.errorf("expected a key")
		}
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			return nil, p.errorf("expected '=' after %q", key)
		}
		p.i++
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, p.errorf("key %q given twice", key)
		}
		m[key] = v
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return m, nil
	}
}

func (p *shorthandParser) value(depth int) (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return "", nil
	}
	switch p.s[p.i] {
	case '[':
		p.i++
		return p.list(depth + 1)
	case '{':
		p.i++
		m, err := p.pairs(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != '}' {
			return nil, p.errorf("expected '}'")
		}
		p.i++
		return m, nil
	case '"', '\'':
		return p.quoted()
	}
	return strings.TrimSpace(p.word(",]}")), nil
}

// list reads values up to the closing ']'.
func (p *shorthandParser) list(depth int) ([]any, error) {
	if depth > maxShorthandDepth {
		return nil, p.errorf("nested too deeply")
	}
	out := []any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("expected ']'")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return nil, p.errorf("unexpected %q in a list", p.s[p.i])
		}
	}
}

func (p *shorthandParser) quoted() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.s) && (p.s[p.i+1] == q || p.s[p.i+1] == '\\'):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case c == q:
			p.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.errorf("unterminated quoted string")
}

// word reads up to (not including) any byte of stop, or the end.
func (p *shorthandParser) word(stop string) string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(stop, rune(p.s[p.i])) {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

func (p *shorthandParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}
