package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/wire"
)

// paramError is a parameter that does not fit its shape, worded as the aws
// CLI words it; all of them are reported together.
type paramError struct{ problems []string }

func (e *paramError) Error() string {
	return "Parameter validation failed:\n" + strings.Join(e.problems, "\n")
}

func (e *paramError) add(format string, args ...any) {
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

var timeType = reflect.TypeOf(wire.Time{})

// decodeTree reads a JSON value keeping numbers as written.
func decodeTree(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: unexpected data after the value")
	}
	return v, nil
}

// parseValue reads one command-line value for a member of Go type t: JSON
// when it looks like JSON, else shorthand for a structure or a map, else
// the scalar as written. The tree's strings are typed by assign.
func parseValue(t reflect.Type, s string) (any, error) {
	base := deref(t)
	trimmed := strings.TrimSpace(s)
	switch {
	case base == timeType || isScalar(base):
		return s, nil
	case strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "["):
		return decodeTree(trimmed)
	case base.Kind() == reflect.Struct || base.Kind() == reflect.Map:
		return parseShorthand(s)
	}
	return s, nil
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// assign stores x (a tree from JSON or shorthand: maps, lists, strings,
// numbers, booleans) into v, a settable value of a wire type. loose lets a
// string stand for a number or a boolean, as in shorthand and plain flags.
// path names the member in messages: GameProperties[0].Key.
func assign(v reflect.Value, x any, path string, loose bool, e *paramError) {
	if v.Kind() == reflect.Pointer {
		if x == nil {
			return
		}
		p := reflect.New(v.Type().Elem())
		assign(p.Elem(), x, path, loose, e)
		v.Set(p)
		return
	}
	if v.Type() == timeType {
		assignTime(v, x, path, e)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		assignStruct(v, x, path, loose, e)
	case reflect.Slice:
		assignSlice(v, x, path, loose, e)
	case reflect.Map:
		assignMap(v, x, path, loose, e)
	default:
		assignScalar(v, x, path, loose, e)
	}
}

func typeError(e *paramError, path string, x any, want string) {
	e.add("Invalid type for parameter %s, value: %s, type: %s, valid types: %s", path, show(x), kindOf(x), want)
}

// show prints a tree value briefly for a message.
func show(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func kindOf(x any) string {
	switch x.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "structure"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", x)
}

func assignStruct(v reflect.Value, x any, path string, loose bool, e *paramError) {
	m, ok := x.(map[string]any)
	if !ok {
		typeError(e, path, x, "structure")
		return
	}
	fields := map[string]int{}
	var names []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		fields[name] = i
		names = append(names, name)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, ok := fields[k]
		if !ok {
			e.add("Unknown parameter in %s: %q, must be one of: %s", orInput(path), k, strings.Join(names, ", "))
			continue
		}
		assign(v.Field(i), m[k], join(path, k), loose, e)
	}
}

func orInput(path string) string {
	if path == "" {
		return "input"
	}
	return path
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func assignSlice(v reflect.Value, x any, path string, loose bool, e *paramError) {
	if v.Type().Elem().Kind() == reflect.Uint8 { // blob
		s, ok := x.(string)
		if !ok {
			typeError(e, path, x, "blob")
			return
		}
		v.SetBytes([]byte(s))
		return
	}
	list, ok := x.([]any)
	if !ok {
		typeError(e, path, x, "list")
		return
	}
	out := reflect.MakeSlice(v.Type(), len(list), len(list))
	for i, el := range list {
		assign(out.Index(i), el, fmt.Sprintf("%s[%d]", path, i), loose, e)
	}
	v.Set(out)
}

func assignMap(v reflect.Value, x any, path string, loose bool, e *paramError) {
	m, ok := x.(map[string]any)
	if !ok {
		typeError(e, path, x, "map")
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), len(m))
	for k, el := range m {
		val := reflect.New(v.Type().Elem()).Elem()
		assign(val, el, path+"."+k, loose, e)
		out.SetMapIndex(reflect.ValueOf(k), val)
	}
	v.Set(out)
}

func assignScalar(v reflect.Value, x any, path string, loose bool, e *paramError) {
	s, isString := x.(string)
	switch v.Kind() {
	case reflect.String:
		if !isString {
			typeError(e, path, x, "string")
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := x.(bool)
		if isString && loose {
			b, ok = strings.EqualFold(s, "true"), strings.EqualFold(s, "true") || strings.EqualFold(s, "false")
		}
		if !ok {
			typeError(e, path, x, "boolean")
			return
		}
		v.SetBool(b)
	case reflect.Int32, reflect.Int64:
		n, ok := number(x, loose)
		i, err := strconv.ParseInt(n, 10, v.Type().Bits())
		if !ok || err != nil {
			typeError(e, path, x, "integer")
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		n, ok := number(x, loose)
		f, err := strconv.ParseFloat(n, v.Type().Bits())
		if !ok || err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			typeError(e, path, x, "number")
			return
		}
		v.SetFloat(f)
	default:
		typeError(e, path, x, v.Kind().String())
	}
}

// number is x's text when x is a number (or, when loose, a string).
func number(x any, loose bool) (string, bool) {
	switch n := x.(type) {
	case json.Number:
		return n.String(), true
	case string:
		return strings.TrimSpace(n), loose
	}
	return "", false
}

// assignTime accepts epoch seconds (a number or numeric text) or an ISO 8601
// / RFC 3339 date-time, as the aws CLI does.
func assignTime(v reflect.Value, x any, path string, e *paramError) {
	var text string
	switch n := x.(type) {
	case json.Number:
		text = n.String()
	case string:
		text = strings.TrimSpace(n)
	default:
		typeError(e, path, x, "timestamp")
		return
	}
	var t wire.Time
	if err := t.UnmarshalJSON([]byte(text)); err == nil {
		v.Set(reflect.ValueOf(t))
		return
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if parsed, err := time.Parse(layout, text); err == nil {
			v.Set(reflect.ValueOf(*wire.NewTime(parsed)))
			return
		}
	}
	e.add("Invalid timestamp for parameter %s, value: %s: use epoch seconds or ISO 8601 (2026-01-02T15:04:05Z)", path, text)
}

// checkRequired reports each required member of v (a wire struct, or a
// pointer, list or map of them) that is missing, below path.
func checkRequired(v reflect.Value, path string, e *paramError) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			checkRequired(v.Elem(), path, e)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			checkRequired(v.Index(i), fmt.Sprintf("%s[%d]", path, i), e)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			checkRequired(iter.Value(), path+"."+iter.Key().String(), e)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for _, name := range requiredMembers[v.Type().Name()] {
			if f := v.FieldByName(name); f.IsValid() && f.IsZero() {
				e.add("Missing required parameter in %s: %q", orInput(path), name)
			}
		}
		for i := 0; i < v.NumField(); i++ {
			checkRequired(v.Field(i), join(path, v.Type().Field(i).Name), e)
		}
	}
}

// encodeInput writes in as the server reads it.
func encodeInput(in any) ([]byte, error) {
	b, err := wire.Encode(wire.JSON, in)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b), nil
}
