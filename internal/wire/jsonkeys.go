package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// encoding/json matches object keys to struct fields without regard to
// case, so {"limit": 500} would fill Limit. GameLift's member names are
// case-sensitive (and the CBOR decoder already is): checkJSONKeys refuses
// a key that differs from a member name only in case, naming it. Keys that
// match no member at all are ignored, as unknown members are.

// checkJSONKeys walks body (a JSON object, already known to be well formed
// enough to start with '{') against the shape t. Syntax and type errors are
// left to the real decoder: the walk stops quietly at the first one. It
// reads the bytes in place: a body whose keys all match allocates nothing.
func checkJSONKeys(body []byte, t reflect.Type) error {
	w := keyWalker{b: body}
	if de, ok := w.value(t, "").(*DecodeError); ok {
		return de
	}
	return nil
}

var (
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	anyType         = reflect.TypeOf((*any)(nil)).Elem()
)

// errStop ends a walk quietly: the body is not what the walk expects.
var errStop = errors.New("wire: not a JSON value")

// keyWalker reads one JSON text, b, from offset i.
type keyWalker struct {
	b []byte
	i int
}

// value reads one value, expected to be of type t, at path: only objects
// read as structures or maps, and arrays read as slices, are looked into;
// everything else is skipped.
func (w *keyWalker) value(t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	w.space()
	if w.i >= len(w.b) {
		return errStop
	}
	switch c := w.b[w.i]; {
	case t == anyType || reflect.PointerTo(t).Implements(unmarshalerType):
		return w.skip()
	case c == '{':
		return w.object(t, path)
	case c == '[':
		return w.array(t, path)
	}
	return w.skip()
}

func (w *keyWalker) object(t reflect.Type, path string) error {
	w.i++ // '{'
	for first := true; ; first = false {
		w.space()
		if w.i < len(w.b) && w.b[w.i] == '}' && first {
			w.i++
			return nil
		}
		raw, err := w.str()
		if err != nil {
			return err
		}
		if w.space(); w.i >= len(w.b) || w.b[w.i] != ':' {
			return errStop
		}
		w.i++
		elem, k, err := memberTypeOf(t, raw, path)
		if err != nil {
			return err
		}
		// Only an object or an array can hold keys to check: the member's
		// path is made for those alone.
		if w.space(); elem != anyType && w.i < len(w.b) && (w.b[w.i] == '{' || w.b[w.i] == '[') {
			if k == "" {
				k = string(raw[1 : len(raw)-1])
			}
			err = w.value(elem, join(path, k))
		} else {
			err = w.skip()
		}
		if err != nil {
			return err
		}
		if w.space(); w.i >= len(w.b) {
			return errStop
		}
		switch w.b[w.i] {
		case ',':
			w.i++
		case '}':
			w.i++
			return nil
		default:
			return errStop
		}
	}
}

func (w *keyWalker) array(t reflect.Type, path string) error {
	elem := anyType
	if t.Kind() == reflect.Slice {
		elem = t.Elem()
	}
	w.i++ // '['
	for first := true; ; first = false {
		w.space()
		if w.i < len(w.b) && w.b[w.i] == ']' && first {
			w.i++
			return nil
		}
		if err := w.value(elem, path); err != nil {
			return err
		}
		if w.space(); w.i >= len(w.b) {
			return errStop
		}
		switch w.b[w.i] {
		case ',':
			w.i++
		case ']':
			w.i++
			return nil
		default:
			return errStop
		}
	}
}

func (w *keyWalker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

// str reads a string and returns it with its quotes, as it is written.
func (w *keyWalker) str() ([]byte, error) {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return nil, errStop
	}
	start := w.i
	for w.i++; w.i < len(w.b); w.i++ {
		switch w.b[w.i] {
		case '\\':
			w.i++
		case '"':
			w.i++
			return w.b[start:w.i], nil
		}
	}
	return nil, errStop
}

// skip reads one value of any kind.
func (w *keyWalker) skip() error {
	w.space()
	if w.i >= len(w.b) {
		return errStop
	}
	switch w.b[w.i] {
	case '"':
		_, err := w.str()
		return err
	case '{', '[':
		depth := 0
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case '"':
				if _, err := w.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					w.i++
					return nil
				}
			}
			w.i++
		}
		return errStop
	}
	// A number, true, false or null.
	start := w.i
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			if w.i == start {
				return errStop
			}
			return nil
		}
		w.i++
	}
	return nil
}

// memberTypeOf is memberType for a key as written (with its quotes). It
// returns the key as read when it had to read it (escapes, bytes beyond
// ASCII, or no member of that exact name), "" otherwise.
func memberTypeOf(t reflect.Type, raw []byte, path string) (reflect.Type, string, error) {
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		switch t.Kind() {
		case reflect.Map:
			return t.Elem(), "", nil
		case reflect.Struct:
			if f, ok := jsonFields(t)[string(inner)]; ok {
				return f, "", nil
			}
		default:
			return anyType, "", nil
		}
	}
	var k string
	if plain {
		k = string(inner)
	} else if json.Unmarshal(raw, &k) != nil {
		return nil, "", errStop
	}
	elem, err := memberType(t, k, path)
	return elem, k, err
}

// memberType is the type of key k in a JSON object read as t; anyType when
// it is not a member (skipped). A key that is a member name in another
// case is an error.
func memberType(t reflect.Type, k, path string) (reflect.Type, error) {
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), nil
	case reflect.Struct:
		fields := jsonFields(t)
		if f, ok := fields[k]; ok {
			return f, nil
		}
		for name := range fields {
			if strings.EqualFold(name, k) {
				return nil, &DecodeError{Member: join(path, k), Reason: "unknown member; member names are case-sensitive: did you mean '" + name + "'?"}
			}
		}
	}
	return anyType, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON member names of struct type t to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}
