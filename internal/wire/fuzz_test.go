package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"
)

// fuzzShapes are fresh input shapes the fuzzers decode into: the ones with
// timestamps, floats, maps, nested lists and every scalar kind.
func fuzzShapes() []any {
	return []any{
		&CreateLocationInput{}, &ListLocationsInput{}, &CreateGameSessionInput{},
		&SearchGameSessionsInput{}, &CreatePlayerSessionsInput{}, &DescribeFleetEventsInput{},
		&TagResourceRequest{}, &CreateFleetInput{}, &StartGameSessionPlacementInput{},
		&UpdateRuntimeConfigurationInput{}, &StartMatchmakingInput{},
	}
}

// Seeds: bodies as botocore and the Go SDK send them.
var jsonSeeds = []string{
	`{}`,
	`{"LocationName": "custom-home", "Tags": [{"Key": "team", "Value": "core"}]}`,
	`{"FleetId": "fleet-1", "MaximumPlayerSessionCount": 4, "GameProperties": [{"Key": "mode", "Value": "ctf"}], "GameSessionData": "x"}`,
	`{"FleetId": "fleet-1", "FilterExpression": "gameSessionProperties.mode = 'ctf' AND hasAvailablePlayerSessions=true", "SortExpression": "creationTimeMillis ASC", "Limit": 10}`,
	`{"GameSessionId": "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/gsess-1", "PlayerIds": ["p1", "p2"], "PlayerDataMap": {"p1": "d"}}`,
	`{"FleetId": "fleet-1", "StartTime": 1767225600, "EndTime": 1767225600.25, "Limit": 5, "NextToken": "abc"}`,
	`{"PlacementId": "p", "GameSessionQueueName": "q", "MaximumPlayerSessionCount": 2, "PlayerLatencies": [{"PlayerId": "p", "RegionIdentifier": "us-west-2", "LatencyInMilliseconds": 12.5}]}`,
	`{"ConfigurationName": "c", "Players": [{"PlayerId": "p", "PlayerAttributes": {"skill": {"N": 23.5}, "tags": {"SL": ["a"]}, "m": {"SDM": {"a": 1.0}}}}]}`,
	`{"Name": "f", "ComputeType": "ANYWHERE", "Locations": [{"Location": "custom-home"}], "AnywhereConfiguration": {"Cost": "10"}}`,
	`{"FleetId": "fleet-1", "RuntimeConfiguration": {"ServerProcesses": [{"LaunchPath": "/game", "ConcurrentExecutions": 1}]}}`,
}

var cborSeeds = []string{
	"a0",
	// {"FleetId":"fleet-1234","ComputeName":"compute-1"} from the Go SDK
	"a267466c656574496d6a666c6565742d313233346b436f6d707574654e616d6569636f6d707574652d31",
	// {"StartTime": 1(1767225600.25)}
	"a169537461727454696d65c1fb41da556e40100000",
	// indefinite-length map and string
	"bf6c4c6f636174696f6e4e616d657f67637573746f6d2d65696e646566ffff",
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range fuzzShapes() {
			roundTrip(t, JSON, body, v)
		}
	})
}

func FuzzDecodeCBOR(f *testing.F) {
	for _, s := range cborSeeds {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	for _, s := range jsonSeeds {
		var v any
		json.Unmarshal([]byte(s), &v)
		b, _ := cbor.Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range fuzzShapes() {
			roundTrip(t, CBOR, body, v)
		}
	})
}

// roundTrip decodes body into v; whatever decodes must validate without
// panicking, re-encode, and decode again.
func roundTrip(t *testing.T, p Protocol, body []byte, v any) {
	if err := Decode(p, body, v); err != nil {
		if _, ok := err.(*DecodeError); !ok {
			t.Fatalf("%T: error %v is not a *DecodeError", v, err)
		}
		return
	}
	if val, ok := v.(interface{ Validate() error }); ok {
		val.Validate()
	}
	out, err := Encode(p, v)
	if err != nil {
		if p == JSON {
			t.Fatalf("%T decoded from %q but does not re-encode: %v", v, body, err)
		}
		t.Fatalf("%T decoded from %x but does not re-encode: %v", v, body, err)
	}
	if err := Decode(p, out, newOf(v)); err != nil {
		t.Fatalf("%T: re-encoded body %q does not decode: %v", v, out, err)
	}
}

func newOf(v any) any {
	switch v.(type) {
	case *CreateLocationInput:
		return &CreateLocationInput{}
	case *ListLocationsInput:
		return &ListLocationsInput{}
	case *CreateGameSessionInput:
		return &CreateGameSessionInput{}
	case *SearchGameSessionsInput:
		return &SearchGameSessionsInput{}
	case *CreatePlayerSessionsInput:
		return &CreatePlayerSessionsInput{}
	case *DescribeFleetEventsInput:
		return &DescribeFleetEventsInput{}
	case *TagResourceRequest:
		return &TagResourceRequest{}
	case *CreateFleetInput:
		return &CreateFleetInput{}
	case *StartGameSessionPlacementInput:
		return &StartGameSessionPlacementInput{}
	case *UpdateRuntimeConfigurationInput:
		return &UpdateRuntimeConfigurationInput{}
	case *StartMatchmakingInput:
		return &StartMatchmakingInput{}
	case *DescribeGameSessionsInput:
		return &DescribeGameSessionsInput{}
	}
	panic("add the shape to newOf")
}

func FuzzTimeJSON(f *testing.F) {
	for _, s := range []string{"1767225600", "1767225600.25", `"1767225600.5"`, "-1", "1e300", "0.0005"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Time
		if v.UnmarshalJSON(b) != nil {
			return
		}
		out, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Time
		if err := back.UnmarshalJSON(out); err != nil || !back.Equal(v.Time) {
			t.Fatalf("%s -> %v -> %s -> %v (%v)", b, v.Time, out, back.Time, err)
		}
	})
}

func FuzzTimeCBOR(f *testing.F) {
	for _, s := range []string{"c1fb41da556e40100000", "c11a6955b900", "c1fa4e000000", "c1f93e00", "c120", "c11bffffffffffffffff"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Time
		if v.UnmarshalCBOR(b) != nil {
			return
		}
		out, err := v.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		var back Time
		if err := back.UnmarshalCBOR(out); err != nil || !back.Equal(v.Time) {
			t.Fatalf("%x -> %v -> %x -> %v (%v)", b, v.Time, out, back.Time, err)
		}
	})
}

// FuzzEncodeError checks that every error body is a well-formed map in its
// protocol that gives back the code and message, whatever their bytes.
func FuzzEncodeError(f *testing.F) {
	f.Add("NotFoundException", `fleet "fleet-1" not found`)
	f.Add("InvalidRequestException", "1 validation error detected: Value 'x\u2028' at 'name'")
	f.Add("X", "\xff\xfe invalid")
	f.Fuzz(func(t *testing.T, code, msg string) {
		for _, p := range []Protocol{JSON, CBOR} {
			b := EncodeError(p, code, msg)
			var got ErrorBody
			var err error
			if p == JSON {
				err = json.Unmarshal(b, &got)
			} else {
				err = cborDec.Unmarshal(b, &got)
			}
			if err != nil {
				t.Fatalf("%v: %q does not decode: %v", p, b, err)
			}
			if utf8.ValidString(msg) && (got.Message != msg || got.MessageU != msg) {
				t.Fatalf("%v: message %q came back as %q / %q", p, msg, got.Message, got.MessageU)
			}
			if utf8.ValidString(code) && got.Type != code {
				t.Fatalf("%v: code %q came back as %q", p, code, got.Type)
			}
			if p == JSON && !bytes.HasPrefix(b, []byte(`{"__type":`)) {
				t.Fatalf("JSON error body %s", b)
			}
		}
	})
}
