package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// encoding/json matches object keys to struct fields without regard to
// case, so {"limit": 500} would fill Limit. GameLift's member names are
// case-sensitive (and the CBOR decoder already is): checkJSONKeys refuses
// a key that differs from a member name only in case, naming it. Keys that
// match no member at all are ignored, as unknown members are.

// checkJSONKeys walks body (a JSON object, already known to be well formed
// enough to start with '{') against the shape t. Syntax and type errors are
// left to the real decoder: the walk stops quietly at the first one.
func checkJSONKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := walkJSON(dec, t, "")
	if de, ok := err.(*DecodeError); ok {
		return de
	}
	return nil
}

var unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// walkJSON reads one value of dec, expected to be of type t, at path.
func walkJSON(dec *json.Decoder, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		var raw json.RawMessage
		return dec.Decode(&raw)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := key.(string)
			elem, err := memberType(t, k, path)
			if err != nil {
				return err
			}
			if err := walkJSON(dec, elem, join(path, k)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		elem := anyType
		if t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkJSON(dec, elem, path); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

var anyType = reflect.TypeOf((*any)(nil)).Elem()

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
