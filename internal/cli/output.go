package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// object is a JSON object with its keys in order.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) any { return o.vals[k] }

// readAnswer reads an answer body as the output shape t (a wire struct
// type) reads it, the way botocore parses: structure members in the
// model's order (the Go struct's field order), members the shape does not
// have dropped, map entries in the order sent, numbers as written. The
// tree holds *object, []any, string, json.Number, bool and nil.
func readAnswer(body []byte, t reflect.Type) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return &object{vals: map[string]any{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := readOrdered(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("unreadable answer: %v", err)
	}
	return shape(v, t), nil
}

const maxAnswerDepth = 64

// readOrdered reads one JSON value, keeping object keys in order.
func readOrdered(dec *json.Decoder, depth int) (any, error) {
	if depth > maxAnswerDepth {
		return nil, fmt.Errorf("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := o.vals[key]; !dup {
				o.keys = append(o.keys, key)
			}
			o.vals[key] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := readOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return tok, nil
}

// shape keeps of v what type t has, in t's order.
func shape(v any, t reflect.Type) any {
	t = deref(t)
	if t == timeType {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		o, ok := v.(*object)
		if !ok {
			return v
		}
		out := &object{vals: map[string]any{}}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if x, ok := o.vals[name]; ok {
				out.keys = append(out.keys, name)
				out.vals[name] = shape(x, t.Field(i).Type)
			}
		}
		return out
	case reflect.Map:
		if o, ok := v.(*object); ok {
			for _, k := range o.keys {
				o.vals[k] = shape(o.vals[k], t.Elem())
			}
		}
	case reflect.Slice:
		if list, ok := v.([]any); ok {
			for i := range list {
				list[i] = shape(list[i], t.Elem())
			}
		}
	}
	return v
}

// writeJSON prints v as the aws CLI does (Python's json.dump with indent=4
// and ensure_ascii=False): nothing for an empty answer.
func writeJSON(w io.Writer, v any) error {
	if o, ok := v.(*object); ok && len(o.keys) == 0 {
		return nil
	}
	var b strings.Builder
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

func writeValue(b *strings.Builder, v any, depth int) {
	pad := strings.Repeat("    ", depth+1)
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range x.keys {
			b.WriteString(pad)
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, x.vals[k], depth+1)
			if i < len(x.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad[4:] + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, el := range x {
			b.WriteString(pad)
			writeValue(b, el, depth+1)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad[4:] + "]")
	case string:
		writeString(b, x)
	default:
		b.WriteString(scalarText(x, true))
	}
}

// writeString quotes s as Python's json module does with ensure_ascii off:
// only the quote, the backslash and control characters are escaped.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// scalarText is a scalar as JSON writes it (asJSON) or as Python's str()
// prints it (tables and text).
func scalarText(v any, asJSON bool) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if asJSON {
			return fmt.Sprint(x)
		}
		if x {
			return "True"
		}
		return "False"
	case nil:
		if asJSON {
			return "null"
		}
		return "None"
	}
	return fmt.Sprint(v)
}

// writeText prints v as the aws CLI's text output does: per structure its
// scalar values in key order on one tab-separated line, then its lists and
// structures, each headed by its key in capitals.
func writeText(w io.Writer, v any) error {
	var b strings.Builder
	textValue(&b, v, "", nil)
	_, err := io.WriteString(w, b.String())
	return err
}

func isContainer(v any) bool {
	switch v.(type) {
	case *object, []any:
		return true
	}
	return false
}

func textValue(b *strings.Builder, v any, ident string, scalarKeys []string) {
	switch x := v.(type) {
	case *object:
		textObject(b, x, ident, scalarKeys)
	case []any:
		textList(b, x, ident)
	default:
		b.WriteString(scalarText(x, false) + "\n")
	}
}

func textObject(b *strings.Builder, o *object, ident string, scalarKeys []string) {
	var scalars []string
	var rest []string
	if scalarKeys == nil {
		for _, k := range sortedKeys(o) {
			if isContainer(o.vals[k]) {
				rest = append(rest, k)
			} else {
				scalars = append(scalars, scalarText(o.vals[k], false))
			}
		}
	} else {
		seen := map[string]bool{}
		for _, k := range scalarKeys {
			seen[k] = true
			s := ""
			if x, ok := o.vals[k]; ok {
				s = scalarText(x, false)
			}
			scalars = append(scalars, s)
		}
		for _, k := range sortedKeys(o) {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
	}
	if len(scalars) > 0 {
		if ident != "" {
			scalars = append([]string{strings.ToUpper(ident)}, scalars...)
		}
		b.WriteString(strings.Join(scalars, "\t") + "\n")
	}
	for _, k := range rest {
		textValue(b, o.vals[k], k, nil)
	}
}

func textList(b *strings.Builder, list []any, ident string) {
	if len(list) == 0 {
		return
	}
	hasObject, hasList := false, false
	for _, el := range list {
		_, isObj := el.(*object)
		_, isList := el.([]any)
		hasObject = hasObject || isObj
		hasList = hasList || isList
	}
	switch {
	case hasObject:
		keys := scalarKeysOf(list)
		for _, el := range list {
			textValue(b, el, ident, keys)
		}
	default:
		var scalars []any
		var nested []any
		for _, el := range list {
			if isContainer(el) {
				nested = append(nested, el)
			} else {
				scalars = append(scalars, el)
			}
		}
		if len(scalars) > 0 {
			textScalars(b, scalars, ident)
		}
		for _, n := range nested {
			textValue(b, n, ident, nil)
		}
	}
}

func textScalars(b *strings.Builder, list []any, ident string) {
	if ident != "" {
		for _, el := range list {
			b.WriteString(strings.ToUpper(ident) + "\t" + scalarText(el, false) + "\n")
		}
		return
	}
	parts := make([]string, len(list))
	for i, el := range list {
		parts[i] = scalarText(el, false)
	}
	b.WriteString(strings.Join(parts, "\t") + "\n")
}

// scalarKeysOf is the sorted union of the scalar keys of the objects in list.
func scalarKeysOf(list []any) []string {
	seen := map[string]bool{}
	for _, el := range list {
		if o, ok := el.(*object); ok {
			for _, k := range o.keys {
				if !isContainer(o.vals[k]) {
					seen[k] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

func sortedKeys(o *object) []string {
	keys := append([]string(nil), o.keys...)
	sortStrings(keys)
	return keys
}

// sortStrings sorts by code point, as Python's sorted does.
func sortStrings(s []string) { slices.Sort(s) }
