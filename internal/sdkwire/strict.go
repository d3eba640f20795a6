package sdkwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// decodeStrict fills the struct v points to from members, one field per
// json tag name, checking each member's JSON type against the field's Go
// type. The sdk tag adds rules: "required" (absent, null or "" refused) and
// "enum=A|B" (a non-empty string outside the list refused).
func decodeStrict(members map[string]json.RawMessage, v any) error {
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		rules := sf.Tag.Get("sdk")
		raw, ok := members[name]
		present := ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if !present {
			if hasRule(rules, "required") {
				return badRequest("%s is required", name)
			}
			continue
		}
		if err := decodeMember(name, bytes.TrimSpace(raw), rv.Field(i)); err != nil {
			return err
		}
		if err := checkRules(name, rules, rv.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

func hasRule(rules, rule string) bool {
	for r := range strings.SplitSeq(rules, ",") {
		if r == rule {
			return true
		}
	}
	return false
}

// checkRules applies the sdk tag's required and enum rules to a decoded field.
func checkRules(name, rules string, fv reflect.Value) error {
	if rules == "" {
		return nil
	}
	if hasRule(rules, "required") && isEmpty(fv) {
		return badRequest("%s must not be empty", name)
	}
	for r := range strings.SplitSeq(rules, ",") {
		allowed, ok := strings.CutPrefix(r, "enum=")
		if !ok || fv.Kind() != reflect.String || fv.String() == "" {
			continue
		}
		if !hasRule(strings.ReplaceAll(allowed, "|", ","), fv.String()) {
			return badRequest("%s must be one of %s, not %q", name, strings.ReplaceAll(allowed, "|", ", "), fv.String())
		}
	}
	return nil
}

// decodeMember decodes one present, non-null member into fv.
func decodeMember(name string, raw []byte, fv reflect.Value) error {
	switch fv.Kind() {
	case reflect.String:
		if raw[0] != '"' {
			return badRequest("%s must be a string", name)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badRequest("%s must be a string", name)
		}
		fv.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := parseInteger(raw, fv.Type().Bits())
		if err != nil {
			return badRequest("%s must be an integer", name)
		}
		fv.SetInt(n)
	case reflect.Bool:
		switch string(raw) {
		case "true":
			fv.SetBool(true)
		case "false":
			fv.SetBool(false)
		default:
			return badRequest("%s must be a boolean", name)
		}
	default:
		return decodeComposite(name, raw, fv)
	}
	return nil
}

// decodeComposite decodes lists, objects and nested structs with
// encoding/json, whose typed targets already refuse wrong member types and
// fractional integers.
func decodeComposite(name string, raw []byte, fv reflect.Value) error {
	want := byte('{')
	what := "an object"
	if fv.Kind() == reflect.Slice {
		want, what = '[', "a list"
	}
	if raw[0] != want {
		return badRequest("%s must be %s", name, what)
	}
	p := reflect.New(fv.Type())
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		msg := "%s is malformed"
		var te *json.UnmarshalTypeError
		if ok := asTypeError(err, &te); ok && te.Field != "" {
			return badRequest(msg+": %s has the wrong type", name, te.Field)
		}
		return badRequest(msg, name)
	}
	fv.Set(p.Elem())
	return nil
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}

// parseInteger accepts a JSON number without fraction or exponent that fits
// in bits, as the SDKs' integer fields do.
func parseInteger(raw []byte, bits int) (int64, error) {
	if bytes.ContainsAny(raw, ".eE") {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(string(raw), 10, bits)
}

// isEmpty reports whether a required field holds nothing: an empty string,
// list or object. Numbers and booleans are never empty once present.
func isEmpty(fv reflect.Value) bool {
	switch fv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map:
		return fv.Len() == 0
	}
	return false
}
