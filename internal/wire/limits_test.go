package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Bodies nesting deeper than MaxNesting are refused before decoding, in
// both protocols, with a decode error naming the limit.
func TestNestingIsBounded(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(`{"FleetId": "fleet-1", "x": ` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if err := Decode(JSON, nest(MaxNesting), &DescribeFleetAttributesInput{}); err != nil {
		t.Errorf("depth %d: %v", MaxNesting, err)
	}
	for _, n := range []int{MaxNesting + 1, 8000, 1 << 20} {
		err := Decode(JSON, nest(n), &DescribeFleetAttributesInput{})
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(de.Reason, "nested deeper than 32") {
			t.Errorf("depth %d: %v", n, err)
		}
	}
	// Brackets inside strings, escaped quotes included, are not nesting.
	s := `{"FleetIds": ["` + strings.Repeat(`[{\"`, 100) + `"]}`
	if err := Decode(JSON, []byte(s), &DescribeFleetAttributesInput{}); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
	cbor := append(bytes.Repeat([]byte{0x81}, MaxNesting+1), 0xa0) // arrays of arrays
	cbor = append([]byte{0xa1, 0x61, 'x'}, cbor...)
	if err := Decode(CBOR, cbor, &DescribeFleetAttributesInput{}); err == nil {
		t.Error("CBOR nested too deep was accepted")
	}
}

// A request with a great many bad values lists the first ten and counts
// the rest, so the answer stays small.
func TestValidationListsTenProblems(t *testing.T) {
	ids := make([]string, 400_000)
	for i := range ids {
		ids[i] = "x"
	}
	err := (&DescribeFleetAttributesInput{FleetIds: ids}).Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Count != 400_000 || len(ve.Problems) != MaxListedProblems {
		t.Fatalf("%T %v", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "400000 validation errors detected: Value 'x' at 'fleetIds.member.1'") ||
		!strings.HasSuffix(msg, "; and 399990 more not listed") || len(msg) > 4096 {
		t.Errorf("%d bytes: %.300s ... %s", len(msg), msg, msg[len(msg)-60:])
	}
	one := (&DescribeFleetAttributesInput{FleetIds: []string{"x"}}).Validate().Error()
	if !strings.HasPrefix(one, "1 validation error detected: ") || strings.Contains(one, "more not listed") {
		t.Errorf("one problem: %s", one)
	}
}

// FuzzJSONDepth: on well-formed JSON, checkJSONDepth agrees with the
// depth encoding/json sees.
func FuzzJSONDepth(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s), 3)
	}
	f.Add([]byte(`{"a": "[[[\"{{"}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		if max < 0 || max > 64 {
			return
		}
		var v any
		if json.Unmarshal(body, &v) != nil {
			checkJSONDepth(body, max) // must not panic
			return
		}
		want := depthOf(v) > max
		if got := checkJSONDepth(body, max) != nil; got != want {
			t.Fatalf("depth %d, max %d: refused=%v", depthOf(v), max, got)
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}
