package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jmespath-community/go-jmespath/pkg/functions"
	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// --query is a JMESPath expression applied to the answer before it is
// printed, as the aws CLI applies it. The evaluator works on plain Go
// values (map[string]any, []any, float64), so the answer is converted to
// them and the result back; what plain maps and numbers lose is kept on
// the side: each object's key order (by map identity), the key order of
// the expression's multi-select hashes, and the text of every number that
// is not a plain integer. Only the JMESPath the aws CLI reads is accepted:
// the evaluator's extensions (arithmetic, let, $, functions beyond the
// specification's) are refused as the aws CLI would refuse them.

// query is a compiled --query.
type query struct {
	text   string
	ast    parsing.ASTNode
	hashes [][]string // key order of each multi-select hash, as written
}

// specFunctions are the functions of the JMESPath specification, the ones
// the aws CLI knows.
var specFunctions = []string{
	"abs", "avg", "ceil", "contains", "ends_with", "floor", "join", "keys", "length", "map",
	"max", "max_by", "merge", "min", "min_by", "not_null", "reverse", "sort", "sort_by",
	"starts_with", "sum", "to_array", "to_number", "to_string", "type", "values",
}

// maxQueryLen bounds an expression; a longer one is refused unread.
const maxQueryLen = 4096

// compileQuery parses expr; an error is a usage error worded as the aws
// CLI words it ("Bad value for --query …").
func compileQuery(expr string) (*query, error) {
	bad := func(format string, args ...any) error {
		return &usageError{plain: true, msg: fmt.Sprintf("Bad value for --query %s: ", expr) + fmt.Sprintf(format, args...)}
	}
	if len(expr) > maxQueryLen {
		return nil, bad("longer than %d bytes", maxQueryLen)
	}
	ast, err := parse(expr)
	if err != nil {
		var se parsing.SyntaxError
		if errors.As(err, &se) {
			msg := tokenNames.Replace(strings.TrimPrefix(se.Error(), "SyntaxError: "))
			return nil, bad("Invalid jmespath expression: %s:\n%s", msg, se.HighlightLocation())
		}
		return nil, bad("Invalid jmespath expression: %v", err)
	}
	q := &query{text: expr, ast: ast}
	if err := q.check(ast, 0); err != nil {
		return nil, bad("%v", err)
	}
	return q, nil
}

// parse runs the parser, turning a panic on some malformed input into an
// error.
func parse(expr string) (ast parsing.ASTNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable expression")
		}
	}()
	return parsing.NewParser().Parse(expr)
}

const maxQueryDepth = 100

// check refuses what the aws CLI's JMESPath does not have, and notes the
// multi-select hashes' key orders.
func (q *query) check(n parsing.ASTNode, depth int) error {
	if depth > maxQueryDepth {
		return fmt.Errorf("nested too deeply")
	}
	switch n.NodeType {
	case parsing.ASTArithmeticExpression, parsing.ASTArithmeticUnaryExpression:
		return fmt.Errorf("Invalid jmespath expression: arithmetic operators are not JMESPath (a name with '-', '+', '*' or '/' in it needs double quotes: \"Key-Name\")")
	case parsing.ASTRootNode, parsing.ASTLetExpression, parsing.ASTVariable, parsing.ASTBindings, parsing.ASTBinding:
		return fmt.Errorf("Invalid jmespath expression: variables ($, let) are not JMESPath")
	case parsing.ASTFunctionExpression:
		name, _ := n.Value.(string)
		if !slices.Contains(specFunctions, name) {
			return fmt.Errorf("Unknown function: %s()", name)
		}
	case parsing.ASTMultiSelectHash:
		var keys []string
		for _, c := range n.Children {
			if k, ok := c.Value.(string); ok && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		q.hashes = append(q.hashes, keys)
	}
	for _, c := range n.Children {
		if err := q.check(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// apply evaluates the query over an answer tree (as readAnswer makes it)
// and returns the result as such a tree.
func (q *query) apply(tree any) (result any, err error) {
	c := &converter{order: map[uintptr][]string{}, numbers: map[float64]string{}, hashes: q.hashes}
	data := c.in(tree)
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("--query %s: the expression failed on this answer", q.text)
		}
	}()
	out, err := interpreter.NewInterpreter(data, interpreter.NewFunctionCaller(c.functions()...), nil).Execute(q.ast, data)
	if err != nil {
		return nil, fmt.Errorf("--query %s: %s", q.text, typeList.ReplaceAllStringFunc(err.Error(), func(s string) string {
			return "one of " + strings.NewReplacer(`"`, "", "[]functions.JpType{", "", "}", "").Replace(s)
		}))
	}
	return c.out(out), nil
}

// typeList is how the evaluator's type errors list the types expected.
var typeList = regexp.MustCompile(`\[\]functions\.JpType\{[^}]*\}`)

// tokenNames words the parser's token names for people.
var tokenNames = strings.NewReplacer(
	"TOKEOF", "the end of the expression", "TOKUnquotedIdentifier", "a name", "TOKQuotedIdentifier", "a quoted name",
	"TOKStar", "'*'", "TOKDot", "'.'", "TOKFilter", "'[?'", "TOKFlatten", "'[]'", "TOKLparen", "'('", "TOKRparen", "')'",
	"TOKLbracket", "'['", "TOKRbracket", "']'", "TOKLbrace", "'{'", "TOKRbrace", "'}'", "TOKOr", "'||'", "TOKPipe", "'|'",
	"TOKNumber", "a number", "TOKComma", "','", "TOKColon", "':'", "TOKLTE", "'<='", "TOKLT", "'<'", "TOKGTE", "'>='",
	"TOKGT", "'>'", "TOKEQ", "'=='", "TOKNE", "'!='", "TOKJSONLiteral", "a `literal`", "TOKStringLiteral", "a 'string'",
	"TOKCurrent", "'@'", "TOKExpref", "'&'", "TOKAnd", "'&&'", "TOKNot", "'!'",
)

// converter turns answer trees into the evaluator's values and back.
type converter struct {
	order   map[uintptr][]string // key order of each map, by identity
	numbers map[float64]string   // how each non-integer number was written
	hashes  [][]string
}

func mapID(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

func (c *converter) in(v any) any {
	switch x := v.(type) {
	case *object:
		m := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			m[k] = c.in(x.vals[k])
		}
		c.order[mapID(m)] = x.keys
		return m
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = c.in(el)
		}
		return out
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return string(x)
		}
		if strings.ContainsAny(string(x), ".eE") {
			if _, seen := c.numbers[f]; !seen {
				c.numbers[f] = string(x)
			}
		}
		return f
	}
	return v
}

func (c *converter) out(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := c.keysOf(x)
		o := &object{keys: keys, vals: make(map[string]any, len(keys))}
		for _, k := range keys {
			o.vals[k] = c.out(x[k])
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = c.out(el)
		}
		return out
	case float64:
		return json.Number(c.numberText(x))
	case string, bool, nil:
		return x
	}
	return fmt.Sprint(v)
}

// keysOf is m's key order: the answer's order for an object of the answer,
// the expression's for a multi-select hash, else sorted.
func (c *converter) keysOf(m map[string]any) []string {
	if keys, ok := c.order[mapID(m)]; ok {
		return keys
	}
	for _, h := range c.hashes {
		if len(h) == len(m) && allIn(h, m) {
			return h
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func allIn(keys []string, m map[string]any) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// numberText writes f as the answer wrote it, or, for a number the
// expression computed, as Python prints an int or a float.
func (c *converter) numberText(f float64) string {
	if s, ok := c.numbers[f]; ok {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return pythonFloat(f)
}

// pythonFloat is Python's repr of a float: the shortest digits that read
// back, in exponent form below 1e-4 and from 1e16 on.
func pythonFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return map[bool]string{true: "Infinity", false: "-Infinity"}[f > 0]
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// functions are the specification's functions, with those whose result
// depends on key order (keys, values, merge, to_string) keeping the
// answer's order as Python's dicts do.
func (c *converter) functions() []functions.FunctionEntry {
	own := map[string]functions.JpFunction{
		"keys": func(args []any) (any, error) {
			m := args[0].(map[string]any)
			out := []any{}
			for _, k := range c.keysOf(m) {
				out = append(out, k)
			}
			return out, nil
		},
		"values": func(args []any) (any, error) {
			m := args[0].(map[string]any)
			out := []any{}
			for _, k := range c.keysOf(m) {
				out = append(out, m[k])
			}
			return out, nil
		},
		"merge": func(args []any) (any, error) {
			merged := map[string]any{}
			var keys []string
			for _, a := range args {
				m := a.(map[string]any)
				for _, k := range c.keysOf(m) {
					if _, ok := merged[k]; !ok {
						keys = append(keys, k)
					}
					merged[k] = m[k]
				}
			}
			c.order[mapID(merged)] = keys
			return merged, nil
		},
		"to_string": func(args []any) (any, error) {
			if s, ok := args[0].(string); ok {
				return s, nil
			}
			var b strings.Builder
			c.compactJSON(&b, args[0])
			return b.String(), nil
		},
	}
	var out []functions.FunctionEntry
	for _, f := range functions.GetDefaultFunctions() {
		if !slices.Contains(specFunctions, f.Name) {
			continue
		}
		if h, ok := own[f.Name]; ok {
			f.Handler = h
		}
		out = append(out, f)
	}
	return out
}

// compactJSON writes v as Python's json.dumps with separators (',', ':')
// writes it: keys in order, non-ASCII escaped.
func (c *converter) compactJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range c.keysOf(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			asciiString(b, k)
			b.WriteByte(':')
			c.compactJSON(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, el := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			c.compactJSON(b, el)
		}
		b.WriteByte(']')
	case string:
		asciiString(b, x)
	case float64:
		b.WriteString(c.numberText(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		asciiString(b, fmt.Sprint(x))
	}
}

// asciiString quotes s as Python's json module does by default: every
// character beyond ASCII as \uXXXX (UTF-16 pairs beyond the BMP).
func asciiString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < 0x10000):
			fmt.Fprintf(b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// applier is the query as a filter of the paged text output: nil without a
// query; an error is printed and ends the output with ExitQuery.
func (q *query) applier(stderr io.Writer) func(any) (any, error) {
	if q == nil {
		return nil
	}
	return func(v any) (any, error) {
		out, err := q.apply(v)
		if err != nil {
			return nil, fail(stderr, ExitQuery, err)
		}
		return out, nil
	}
}
