package ruleset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Error is a rule set that does not load: Path locates the offending member
// (for example `rules[1] "FairTeamSkill"`), Reason says what is wrong.
type Error struct {
	Path   string
	Reason string
	// NotObject is set when the body is JSON but not an object.
	NotObject bool
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "Rule set is invalid: " + e.Reason
	}
	return "Rule set is invalid: " + e.Path + ": " + e.Reason
}

func errf(path, format string, args ...any) *Error {
	return &Error{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// stripComments removes // line comments and /* */ block comments that lie
// outside JSON strings, so bodies copied from older published examples
// load. Everything else is left byte for byte.
func stripComments(b []byte) []byte {
	if !bytes.Contains(b, []byte("/")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			out = append(out, c)
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return out // unterminated: the JSON decoder reports the truncation
			}
			i += end + 3
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// object is one JSON object of the body with its path for messages.
// Duplicate keys keep the last value, as encoding/json does.
type object struct {
	path string
	m    map[string]json.RawMessage
}

func decodeObject(path string, raw json.RawMessage) (object, *Error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return object{}, errf(path, "must be a JSON object")
	}
	return object{path: path, m: m}, nil
}

func (o object) has(key string) bool {
	v, ok := o.m[key]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func (o object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// str returns a string member; "" when absent.
func (o object) str(key string, required bool) (string, *Error) {
	if !o.has(key) {
		if required {
			return "", errf(o.path, "%s is required", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(o.m[key], &s); err != nil {
		return "", errf(o.at(key), "must be a string")
	}
	return s, nil
}

// enum returns a string member that must be one of allowed (or absent).
func (o object) enum(key string, required bool, allowed ...string) (string, *Error) {
	s, err := o.str(key, required)
	if err != nil || s == "" && !o.has(key) {
		return s, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", errf(o.at(key), "value %q is not one of %s", s, strings.Join(allowed, ", "))
}

// num returns a numeric member written as a JSON number or a numeric
// string; nil when absent.
func (o object) num(key string, required bool) (*float64, *Error) {
	if !o.has(key) {
		if required {
			return nil, errf(o.path, "%s is required", key)
		}
		return nil, nil
	}
	f, ok := number(o.m[key])
	if !ok {
		return nil, errf(o.at(key), "must be a number")
	}
	return &f, nil
}

// integer returns an integral numeric member; def when absent.
func (o object) integer(key string, required bool, def int) (int, *Error) {
	f, err := o.num(key, required)
	if err != nil || f == nil {
		return def, err
	}
	if *f != math.Trunc(*f) || math.Abs(*f) > 1e9 {
		return 0, errf(o.at(key), "must be an integer")
	}
	return int(*f), nil
}

// number reads a JSON number or a string holding one.
func number(v json.RawMessage) (float64, bool) {
	var f float64
	if err := json.Unmarshal(v, &f); err == nil {
		return f, true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// list returns an array member's items; nil when absent.
func (o object) list(key string, required bool) ([]json.RawMessage, *Error) {
	if !o.has(key) {
		if required {
			return nil, errf(o.path, "%s is required", key)
		}
		return nil, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(o.m[key], &l); err != nil {
		return nil, errf(o.at(key), "must be a list")
	}
	return l, nil
}

// strings returns a member that is a list of strings.
func (o object) strings(key string) ([]string, *Error) {
	if !o.has(key) {
		return nil, nil
	}
	var l []string
	if err := json.Unmarshal(o.m[key], &l); err != nil {
		return nil, errf(o.at(key), "must be a list of strings")
	}
	return l, nil
}
