package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzDecodeJSONAsTokens: decoding a JSON body answers as it did when the
// keys were checked by walking the decoder's tokens and the data after
// the object was looked for with Token (decodeJSONTokens, kept here): the
// same value decoded, the same error.
func FuzzDecodeJSONAsTokens(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"limit": 500}`, `{"Tags": [{"key": "k"}]}`, `{"Lim\u0069t": 1} `, `{"LIM\u0049T": 1}`, "{\"FleetId\": \"f\"}\n\t x",
		`{"PlayerDataMap": {"P1": "d"}, "PlayerIds": [[], {}, null]}`, `{"RuntimeConfiguration": {"ServerProcesses": [{"launchPath": "/g"}]}}`,
		`{"Players": [{"PlayerAttributes": {"s": {"n": 1}}}], "x": {"Limit": {"a": [1, {"b": "}"}]}}}`, "{\"\xff\": 1, \"limit\": 2}",
		`{} {}`, `{}   `, `{"Limit": 1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, shape := range fuzzShapes() {
			got, want := newOf(shape), newOf(shape)
			gerr := decodeJSON(body, got)
			werr := decodeJSONTokens(body, want)
			if !sameError(gerr, werr) {
				t.Fatalf("%T %q: error %v, was %v", shape, body, gerr, werr)
			}
			if gerr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%T %q: %+v, was %+v", shape, body, got, want)
			}
		}
	})
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	var da, db *DecodeError
	if errors.As(a, &da) && errors.As(b, &db) {
		return *da == *db
	}
	return a.Error() == b.Error()
}

func decodeJSONTokens(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &DecodeError{Reason: "the body must be a JSON object"}
	}
	if err := checkJSONDepth(body, MaxNesting); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *timeError
		if errors.As(err, &te) {
			return &DecodeError{Member: timeMember(JSON, body, v), Reason: te.reason}
		}
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &DecodeError{Reason: "unexpected data after the JSON object"}
	}
	dec = json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if de, ok := walkTokens(dec, reflect.TypeOf(v), "").(*DecodeError); ok {
		return de
	}
	return nil
}

func walkTokens(dec *json.Decoder, t reflect.Type, path string) error {
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
			if err := walkTokens(dec, elem, join(path, k)); err != nil {
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
			if err := walkTokens(dec, elem, path); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// BenchmarkDecodeJSON is the decoding of a search request's body, as the
// benchmarks of internal/bench send it.
func BenchmarkDecodeJSON(b *testing.B) {
	body := []byte(`{"FleetId": "fleet-0b7f1f6e-3c1d-4f5e-9a55-4a0d5c1e2f3a", "FilterExpression": "hasAvailablePlayerSessions = true", "SortExpression": "creationTimeMillis DESC", "Limit": 20}`)
	b.ReportAllocs()
	for b.Loop() {
		var in SearchGameSessionsInput
		if err := Decode(JSON, body, &in); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeJSONAsStream: decoding a body with json.Unmarshal answers as
// the stream decoder does (decodeJSONStream, which it falls back to on a
// syntax error): the same value decoded, the same error.
func FuzzDecodeJSONAsStream(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"Limit": "x"} x`, `{"Limit": 1e99}`, `{"Limit": 1.5, "FleetId": 3}`, `{"StartTime": "x"}`, `{"StartTime": 1} {`,
		`{"FleetId": "f"}` + "\n\t ", `{"FleetId": "f",}`, `{"FleetId": "f"`, `{"limit": 5}`, `{"Limit": null}`, "{\"FleetId\": \"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) == 0 || trimmed[0] != '{' || checkJSONDepth(body, MaxNesting) != nil {
			return
		}
		for _, shape := range append(fuzzShapes(), &DescribeGameSessionsInput{}) {
			got, want := newOf(shape), newOf(shape)
			gerr := decodeJSON(body, got)
			werr := decodeJSONStream(body, want)
			if !sameError(gerr, werr) {
				t.Fatalf("%T %q: error %v, was %v", shape, body, gerr, werr)
			}
			if gerr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%T %q: %+v, was %+v", shape, body, got, want)
			}
		}
	})
}
