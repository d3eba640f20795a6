package cli

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
)

// usageError is a command line that cannot be read: an unknown flag, a
// missing value or a missing required flag (the aws CLI's exit status 252).
type usageError struct {
	msg   string
	plain bool // printed bare, as the aws CLI prints pagination errors
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// globals are the options that apply to every operation.
type globals struct {
	endpoint, region, accessKey, secretKey, sessionToken string
	output                                               string
	query                                                string
	querySet                                             bool // --query given, even empty
	cliInputJSON                                         string
	help                                                 bool
	pageText                                             map[string]string // --starting-token, --page-size, --max-items as given
	paging                                               paging
}

// globalFlags maps each global flag to where its value goes.
func (g *globals) flags() map[string]*string {
	if g.pageText == nil {
		g.pageText = map[string]string{}
	}
	m := map[string]*string{
		"endpoint-url": &g.endpoint, "region": &g.region, "output": &g.output,
		"access-key": &g.accessKey, "secret-key": &g.secretKey, "session-token": &g.sessionToken,
		"cli-input-json": &g.cliInputJSON, "query": &g.query,
	}
	for _, f := range pageFlags {
		v := g.pageText[f]
		m[f] = &v
	}
	return m
}

// parseGlobal reads a global flag at args[i], if it is one, and returns how
// many arguments it took (0: not a global flag).
func (g *globals) parseGlobal(args []string, i int) (int, error) {
	name, val, hasVal := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
	if !strings.HasPrefix(args[i], "--") {
		return 0, nil
	}
	switch name {
	case "help":
		g.help = true
		return 1, nil
	case "no-paginate":
		g.paging.off = true
		return 1, nil
	}
	flags := g.flags()
	dst, ok := flags[name]
	if !ok {
		return 0, nil
	}
	n := 1
	if !hasVal {
		if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return 0, usagef("argument --%s: expected one argument", name)
		}
		val, n = args[i+1], 2
	}
	*dst = val
	g.querySet = g.querySet || name == "query"
	if slices.Contains(pageFlags, name) {
		g.pageText[name] = val
	}
	return n, nil
}

// parseCommand reads the arguments after the operation name into the
// global options and a new input shape of c. Values are read per the
// member's Go type: lists take every value up to the next --flag; booleans
// are --flag / --no-flag; structures, maps and lists of them take JSON or
// shorthand; file://path reads the value from a file.
func parseCommand(c *command, args []string, g *globals) (any, error) {
	values := map[string][]string{}
	var order []string
	byFlag := map[string]*param{}
	for i := range c.Params {
		byFlag[c.Params[i].Flag] = &c.Params[i]
	}
	for i := 0; i < len(args); {
		n, err := g.parseGlobal(args, i)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			i += n
			continue
		}
		name, vals, n, err := readFlag(args, i, byFlag)
		if err != nil {
			return nil, err
		}
		if _, seen := values[name]; !seen {
			order = append(order, name)
		}
		values[name] = vals
		i += n
	}
	if g.help {
		return nil, nil
	}
	if err := g.setPaging(c); err != nil {
		return nil, err
	}
	return buildInput(c, g, values, order, byFlag)
}

// readFlag reads the parameter flag at args[i] and its values.
func readFlag(args []string, i int, byFlag map[string]*param) (string, []string, int, error) {
	arg := args[i]
	if !strings.HasPrefix(arg, "--") {
		return "", nil, 0, usagef("Unknown options: %s", arg)
	}
	name, inline, hasInline := strings.Cut(arg[2:], "=")
	p, ok := byFlag[name]
	if !ok {
		if q, neg := byFlag[strings.TrimPrefix(name, "no-")]; neg && q.Type == "boolean" && !hasInline {
			return q.Flag, []string{"false"}, 1, nil
		}
		return "", nil, 0, usagef("Unknown options: %s", arg)
	}
	if p.Type == "boolean" && !hasInline {
		return name, []string{"true"}, 1, nil
	}
	if hasInline {
		return name, []string{inline}, 1, nil
	}
	var vals []string
	j := i + 1
	for j < len(args) && !strings.HasPrefix(args[j], "--") {
		vals = append(vals, args[j])
		j++
		if p.Type != "list" {
			break
		}
	}
	if len(vals) == 0 {
		return "", nil, 0, usagef("argument --%s: expected one argument", name)
	}
	return name, vals, j - i, nil
}

// buildInput fills a new input of c from --cli-input-json, then the flags,
// and checks that every required member is there.
func buildInput(c *command, g *globals, values map[string][]string, order []string, byFlag map[string]*param) (any, error) {
	in := c.Input()
	rv := reflect.ValueOf(in).Elem()
	e := &paramError{}
	if g.cliInputJSON != "" {
		text, err := readParamFile(g.cliInputJSON)
		if err != nil {
			return nil, usagef("--cli-input-json: %v", err)
		}
		tree, err := decodeTree(text)
		if err != nil {
			return nil, usagef("--cli-input-json: %v", err)
		}
		assign(rv, tree, "", false, e)
	}
	for _, name := range order {
		p := byFlag[name]
		if err := setMember(rv.FieldByName(p.Member), p, values[name], e); err != nil {
			return nil, err
		}
	}
	var missing []string
	for _, p := range c.Params {
		if p.Required && rv.FieldByName(p.Member).IsZero() {
			missing = append(missing, "--"+p.Flag)
		}
	}
	if len(missing) > 0 {
		return nil, usagef("the following arguments are required: %s", strings.Join(missing, ", "))
	}
	checkRequired(rv, "", e)
	if len(e.problems) > 0 {
		return nil, e
	}
	return in, nil
}

// setMember parses the flag values of p into the member field f.
func setMember(f reflect.Value, p *param, vals []string, e *paramError) error {
	for i, v := range vals {
		text, err := readParamFile(v)
		if err != nil {
			return usagef("--%s: %v", p.Flag, err)
		}
		vals[i] = text
	}
	t := f.Type()
	if t.Kind() != reflect.Slice || t.Elem().Kind() == reflect.Uint8 || (len(vals) == 1 && strings.HasPrefix(strings.TrimSpace(vals[0]), "[")) {
		return setValue(f, p, vals[0], p.Member, e)
	}
	out := reflect.MakeSlice(t, len(vals), len(vals))
	for i, v := range vals {
		if err := setValue(out.Index(i), p, v, fmt.Sprintf("%s[%d]", p.Member, i), e); err != nil {
			return err
		}
	}
	f.Set(out)
	return nil
}

// setValue parses one command-line value into f. Plain and shorthand
// values are text, so they may stand for numbers and booleans; JSON
// values must have the member's JSON type.
func setValue(f reflect.Value, p *param, v, path string, e *paramError) error {
	x, err := parseValue(f.Type(), v)
	if err != nil {
		return usagef("Error parsing parameter '--%s': %v", p.Flag, err)
	}
	loose := !looksJSON(v) || isScalar(deref(f.Type()))
	assign(f, x, path, loose, e)
	return nil
}

func looksJSON(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[")
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// readParamFile returns the value itself, or the content of the file it
// names with file:// (text) or fileb:// (bytes).
func readParamFile(v string) (string, error) {
	for _, prefix := range []string{"file://", "fileb://"} {
		if path, ok := strings.CutPrefix(v, prefix); ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("unable to load paramfile %s: %v", v, err)
			}
			return string(b), nil
		}
	}
	return v, nil
}
