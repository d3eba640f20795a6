package api_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/wire"
)

// badInput is a request that must be refused with InvalidRequestException
// and a message containing words.
type badInput struct {
	name  string
	op    string
	body  func(p wire.Protocol) []byte
	words []string
	only  *wire.Protocol // nil: both protocols
}

func jsonOnly(name, op, body string, words ...string) badInput {
	p := wire.JSON
	return badInput{name, op, func(wire.Protocol) []byte { return []byte(body) }, words, &p}
}

func cborOnly(name, op string, body []byte, words ...string) badInput {
	p := wire.CBOR
	return badInput{name, op, func(wire.Protocol) []byte { return body }, words, &p}
}

func badBoth(t *testing.T, name, op, jsonText string, words ...string) badInput {
	return badInput{name, op, func(p wire.Protocol) []byte { return bodyIn(t, p, jsonText) }, words, nil}
}

func badInputs(t *testing.T) []badInput {
	return []badInput{
		jsonOnly("malformed JSON", "CreateLocation", `{"LocationName": `, "JSON"),
		jsonOnly("broken JSON", "CreateLocation", `{"LocationName" "custom-x"}`, "invalid JSON"),
		jsonOnly("array, not object", "CreateLocation", `["custom-x"]`, "JSON object"),
		jsonOnly("string, not object", "CreateLocation", `"custom-x"`, "JSON object"),
		jsonOnly("null, not object", "CreateLocation", `null`, "JSON object"),
		jsonOnly("trailing garbage", "CreateLocation", `{"LocationName": "custom-x"} x`, "after the JSON object"),
		jsonOnly("two objects", "CreateLocation", `{"LocationName": "custom-x"}{}`, "after the JSON object"),
		jsonOnly("invalid UTF-8", "CreateLocation", "{\"LocationName\": \"custom-\xff\"}", "locationName"),
		cborOnly("array, not map", "CreateLocation", []byte{0x81, 0x61, 'x'}, "CBOR map"),
		cborOnly("text, not map", "CreateLocation", []byte{0x61, 'x'}, "CBOR map"),
		cborOnly("truncated map", "CreateLocation", append([]byte{0xa1, 0x6c}, "Location"...), "malformed"),
		cborOnly("trailing garbage", "CreateLocation", []byte{0xa0, 0x00}, "after the CBOR map"),
		cborOnly("invalid UTF-8", "CreateLocation", append(append([]byte{0xa1, 0x6c}, "LocationName"...), 0x62, 0xc3, 0x28), "UTF-8"),
		cborOnly("duplicate key", "ListLocations", append(append(append([]byte{0xa2, 0x65}, "Limit"...), 0x01, 0x65), append([]byte("Limit"), 0x02)...), "duplicate"),
		cborOnly("integer overflow", "ListLocations", append(append([]byte{0xa1, 0x65}, "Limit"...), 0x1b, 0, 0, 0, 0x17, 0x48, 0x76, 0xe7, 0xff), "Limit", "out of range"),
		badBoth(t, "string for integer", "ListLocations", `{"Limit": "ten"}`, "Limit", "integer"),
		badBoth(t, "fraction for integer", "ListLocations", `{"Limit": 1.5}`, "Limit", "integer"),
		badBoth(t, "integer for string", "CreateLocation", `{"LocationName": 5}`, "LocationName", "string"),
		badBoth(t, "object for list", "ListLocations", `{"Filters": {"a": 1}}`, "Filters", "list"),
		badBoth(t, "string for list", "CreateLocation", `{"LocationName": "custom-x", "Tags": "k=v"}`, "Tags", "list"),
		badBoth(t, "string for structure", "CreateLocation", `{"LocationName": "custom-x", "Tags": ["k"]}`, "Tags", "structure"),
		badBoth(t, "nested wrong type", "CreateLocation", `{"LocationName": "custom-x", "Tags": [{"Key": 5, "Value": "v"}]}`, "Tags", "string"),
		badBoth(t, "unknown enum value", "ListLocations", `{"Filters": ["BOGUS"]}`,
			"1 validation error detected: Value 'BOGUS' at 'filters.member.1' failed to satisfy constraint: Member must satisfy enum value set: [AWS, CUSTOM]"),
		jsonOnly("member name in the wrong case", "ListLocations", `{"limit": 500}`, "'limit'", "case-sensitive", "'Limit'"),
		jsonOnly("integer overflow", "ListLocations", `{"Limit": 99999999999}`, "Limit", "out of range"),
		badBoth(t, "below minimum", "ListLocations", `{"Limit": 0}`,
			"1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"),
		badBoth(t, "negative", "ListLocations", `{"Limit": -1}`, "at 'limit'", "greater than or equal to 1"),
		badBoth(t, "above maximum", "ListLocations", `{"Limit": 201}`, "at 'limit'", "less than or equal to 200"),
		badBoth(t, "empty list", "ListLocations", `{"Filters": []}`, "at 'filters'", "length greater than or equal to 1"),
		badBoth(t, "pattern", "CreateLocation", `{"LocationName": "not-custom"}`,
			`1 validation error detected: Value 'not-custom' at 'locationName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^custom-[A-Za-z0-9\-]+`),
		badBoth(t, "too long", "CreateLocation", `{"LocationName": "custom-`+strings.Repeat("a", 70)+`"}`,
			"at 'locationName'", "Member must have length less than or equal to 64"),
		badBoth(t, "required member null", "CreateLocation", `{"LocationName": null}`,
			"Value null at 'locationName' failed to satisfy constraint: Member must not be null"),
		badBoth(t, "nested required member", "TagResource",
			`{"ResourceARN": "arn:aws:gamelift:us-west-2:123456789012:location/custom-x", "Tags": [{"Key": "a", "Value": "b"}, {"Value": "v"}]}`,
			"Value null at 'tags.member.2.key' failed to satisfy constraint: Member must not be null"),
		badBoth(t, "two problems", "CreateLocation", `{"LocationName": "not-custom", "Tags": [{"Key": "", "Value": "v"}]}`,
			"2 validation errors detected: ", "at 'locationName'", "at 'tags.member.1.key'"),
		badBoth(t, "empty NextToken", "ListLocations", `{"NextToken": ""}`, "at 'nextToken'"),
	}
}

func TestBadInput(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			for _, tc := range badInputs(t) {
				for _, p := range wireProtocols {
					if tc.only != nil && *tc.only != p {
						continue
					}
					t.Run(p.String()+"/"+tc.name, func(t *testing.T) {
						r := rawCall{proto: p, op: tc.op, body: tc.body(p)}.do(t, env)
						m := wantError(t, p, r, 400, "InvalidRequestException")
						msg, _ := m["message"].(string)
						for _, w := range tc.words {
							if !strings.Contains(msg, w) {
								t.Errorf("message %q does not contain %q", msg, w)
							}
						}
					})
				}
			}
			if n := locationCount(t, env); n != 0 {
				t.Errorf("bad requests created %d locations", n)
			}
		})
	}
}

func TestWrongContentType(t *testing.T) {
	env := apitest.Start(t)
	for _, tc := range []struct {
		p  wire.Protocol
		ct string
	}{
		{wire.JSON, "text/plain"},
		{wire.JSON, "application/cbor"},
		{wire.JSON, "application/x-www-form-urlencoded"},
		{wire.CBOR, "application/json"},
		{wire.CBOR, "application/x-amz-json-1.1"},
	} {
		c := createLocation(tc.p, t, "custom-ct")
		c.pre = func(r *http.Request) { r.Header.Set("Content-Type", tc.ct) }
		m := wantError(t, tc.p, c.do(t, env), 400, "InvalidRequestException")
		if !strings.Contains(m["message"].(string), "Content-Type") {
			t.Errorf("%v %s: message %q does not name Content-Type", tc.p, tc.ct, m["message"])
		}
	}
	// application/json is what some JSON clients send; charset parameters are fine.
	for _, ct := range []string{"application/json", "application/x-amz-json-1.1; charset=utf-8"} {
		c := rawCall{proto: wire.JSON, op: "ListLocations", pre: func(r *http.Request) { r.Header.Set("Content-Type", ct) }}
		if r := c.do(t, env); r.Status != 200 {
			t.Errorf("Content-Type %s: status %d: %s", ct, r.Status, r.Body)
		}
	}
	if n := locationCount(t, env); n != 0 {
		t.Errorf("refused requests created %d locations", n)
	}
}

func TestBodyOverCap(t *testing.T) {
	env := apitest.Start(t)
	for _, p := range wireProtocols {
		name := "custom-" + strings.Repeat("a", 2<<20)
		var body []byte
		if p == wire.JSON {
			body = []byte(`{"LocationName": "` + name + `"}`)
		} else {
			body = cborBody(t, map[string]string{"LocationName": name})
		}
		r := rawCall{proto: p, op: "CreateLocation", body: body}.do(t, env)
		m := wantError(t, p, r, 400, "InvalidRequestException")
		if !strings.Contains(m["message"].(string), "exceeds") {
			t.Errorf("message %q", m["message"])
		}
		if bytes.Contains(r.Body, []byte("aaaaaaaa")) {
			t.Errorf("the answer echoes the body")
		}
	}
	if n := locationCount(t, env); n != 0 {
		t.Errorf("refused requests created %d locations", n)
	}
}
