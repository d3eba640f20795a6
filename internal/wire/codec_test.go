package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 250*int(time.Millisecond), time.UTC)

func TestTimeJSON(t *testing.T) {
	b, err := json.Marshal(GameSession{CreationTime: NewTime(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"CreationTime":1767225600.25}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	b, _ = json.Marshal(GameSession{CreationTime: NewTime(t0.Add(-250 * time.Millisecond))})
	if got, want := string(b), `{"CreationTime":1767225600}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{`1767225600`, t0.Add(-250 * time.Millisecond)},
		{`1767225600.25`, t0},
		{`1767225600.2501`, t0},
		{`"1767225600.25"`, t0},
		{`1.76722560025e9`, t0},
	} {
		var v Time
		if err := json.Unmarshal([]byte(tc.in), &v); err != nil || !v.Equal(tc.want) {
			t.Errorf("%s: got %v (%v), want %v", tc.in, v.Time, err, tc.want)
		}
	}
	for _, bad := range []string{`"soon"`, `true`, `1e400`, `-1e300`, `{}`} {
		var v Time
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s: decoded as %v, want an error", bad, v.Time)
		}
	}
}

func TestTimeCBOR(t *testing.T) {
	b, err := Encode(CBOR, &GameSession{CreationTime: NewTime(t0)})
	if err != nil {
		t.Fatal(err)
	}
	// {"CreationTime": 1(1767225600.25)}, exactly as the Go SDK sends it.
	want := "a1" + "6c" + hex.EncodeToString([]byte("CreationTime")) + "c1fb41da556e40100000"
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		name, hex string
		want      time.Time
	}{
		{"float64", "c1fb41da556e40100000", t0},
		{"uint", "c11a6955b900", t0.Add(-250 * time.Millisecond)},
		{"uint64", "c11b000000006955b900", t0.Add(-250 * time.Millisecond)},
		{"negative int", "c120", time.Unix(-1, 0).UTC()},
		{"float32", "c1fa4e000000", time.Unix(536870912, 0).UTC()},
		{"float16", "c1f93e00", time.Unix(1, 500*int64(time.Millisecond)).UTC()},
	} {
		raw, _ := hex.DecodeString(tc.hex)
		var v Time
		if err := v.UnmarshalCBOR(raw); err != nil || !v.Equal(tc.want) {
			t.Errorf("%s: got %v (%v), want %v", tc.name, v.Time, err, tc.want)
		}
	}
	for name, bad := range map[string]string{
		"untagged":   "1a6955b980",
		"tag 0":      "c0781a323032362d30312d30315430303a30303a30302e3235305a",
		"text":       "c16378797a",
		"NaN":        "c1f97e00",
		"infinity":   "c1f97c00",
		"huge":       "c11bffffffffffffffff",
		"truncated":  "c1fb41da",
		"not a time": "f5",
	} {
		raw, _ := hex.DecodeString(bad)
		var v Time
		if err := v.UnmarshalCBOR(raw); err == nil {
			t.Errorf("%s: decoded as %v, want an error", name, v.Time)
		}
	}
}

func TestFloatWidths(t *testing.T) {
	p := GameSessionPlacement{
		PlayerLatencies: []PlayerLatency{{PlayerId: String("p"), RegionIdentifier: String("r"), LatencyInMilliseconds: ptr(float32(12.5))}},
	}
	b, err := Encode(CBOR, &p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, append([]byte("LatencyInMilliseconds"), 0xfa, 0x41, 0x48, 0x00, 0x00)) {
		t.Errorf("LatencyInMilliseconds is not float32 12.5: %x", b)
	}
	a := AttributeValue{N: ptr(1.0)}
	b, _ = Encode(CBOR, &a)
	if !bytes.Contains(b, []byte{0x61, 'N', 0xfb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("a double is not float64 1.0: %x", b)
	}
	b, _ = Encode(JSON, &p)
	if !strings.Contains(string(b), `"LatencyInMilliseconds":12.5`) {
		t.Errorf("JSON: %s", b)
	}
}

func ptr[T any](v T) *T { return &v }

func TestEncodeEmpty(t *testing.T) {
	for _, tc := range []struct {
		p    Protocol
		v    any
		want string
	}{
		{CBOR, nil, "a0"},
		{JSON, nil, "7b7d"},
		{CBOR, &DeleteLocationOutput{}, "a0"},
		{JSON, &DeleteLocationOutput{}, "7b7d"},
	} {
		b, err := Encode(tc.p, tc.v)
		if err != nil || hex.EncodeToString(b) != tc.want {
			t.Errorf("%v %T: %x (%v), want %s", tc.p, tc.v, b, err, tc.want)
		}
	}
}

func TestEmptyListsStayLists(t *testing.T) {
	out := ListLocationsOutput{Locations: []LocationModel{}}
	b, _ := Encode(JSON, &out)
	if string(b) != `{"Locations":[]}` {
		t.Errorf("JSON: %s", b)
	}
	b, _ = Encode(CBOR, &out)
	if hex.EncodeToString(b) != "a1694c6f636174696f6e7380" {
		t.Errorf("CBOR: %x", b)
	}
}

func TestErrorBodies(t *testing.T) {
	j := EncodeError(JSON, "NotFoundException", "fleet \"x\" not found")
	if string(j) != `{"__type":"NotFoundException","message":"fleet \"x\" not found","Message":"fleet \"x\" not found"}` {
		t.Errorf("JSON: %s", j)
	}
	c := EncodeError(CBOR, "NotFoundException", "m")
	want := "a3" + "665f5f74797065" + "714e6f74466f756e64457863657074696f6e" + "676d657373616765616d" + "674d657373616765616d"
	if hex.EncodeToString(c) != want {
		t.Errorf("CBOR: %x\nwant %s", c, want)
	}
}

func TestDecodeTimestampsInInputs(t *testing.T) {
	var in DescribeFleetEventsInput
	if err := Decode(JSON, []byte(`{"FleetId": "fleet-1", "StartTime": 1767225600, "EndTime": 1767225600.25}`), &in); err != nil {
		t.Fatal(err)
	}
	if !in.StartTime.Equal(t0.Add(-250*time.Millisecond)) || !in.EndTime.Equal(t0) {
		t.Errorf("got %v, %v", in.StartTime, in.EndTime)
	}
	body := []byte{0xa2, 0x67}
	body = append(body, "FleetId"...)
	body = append(body, 0x67)
	body = append(body, "fleet-1"...)
	body = append(body, 0x69)
	body = append(body, "StartTime"...)
	untagged := append(append([]byte{}, body...), 0x1a, 0x69, 0x55, 0xb9, 0x00)
	tagged := append(append([]byte{}, body...), 0xc1, 0xfb, 0x41, 0xda, 0x55, 0x6e, 0x40, 0x10, 0, 0)
	in = DescribeFleetEventsInput{}
	if err := Decode(CBOR, tagged, &in); err != nil || !in.StartTime.Equal(t0) {
		t.Errorf("tagged: %v (%v)", in.StartTime, err)
	}
	err := Decode(CBOR, untagged, &DescribeFleetEventsInput{})
	if err == nil || !strings.Contains(err.Error(), "StartTime") || !strings.Contains(err.Error(), "tag 1") {
		t.Errorf("untagged: %v, want an error naming StartTime and tag 1", err)
	}
	err = Decode(JSON, []byte(`{"StartTime": "yesterday"}`), &DescribeFleetEventsInput{})
	if err == nil || !strings.Contains(err.Error(), "StartTime") {
		t.Errorf("JSON text time: %v, want an error naming StartTime", err)
	}
}

func TestJSONMemberNamesAreCaseSensitive(t *testing.T) {
	for _, tc := range []struct{ body, words string }{
		{`{"limit": 5}`, "'limit'"},
		{`{"LocationName": "custom-x", "Tags": [{"Key": "a", "Value": "b"}, {"key": "a", "Value": "b"}]}`, "'Tags.key'"},
		{`{"LOCATIONNAME": "custom-x"}`, "did you mean 'LocationName'"},
	} {
		var in CreateLocationInput
		var err error
		if strings.Contains(tc.body, "limit") {
			err = Decode(JSON, []byte(tc.body), &ListLocationsInput{})
		} else {
			err = Decode(JSON, []byte(tc.body), &in)
		}
		if err == nil || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %v, want an error containing %s", tc.body, err, tc.words)
		}
	}
	// Unknown members are ignored; map keys are data, in any case.
	var in CreatePlayerSessionsInput
	body := `{"GameSessionId": "g", "PlayerIds": ["p"], "PlayerDataMap": {"playerdatamap": "x"}, "Unknown": {"limit": 1}}`
	if err := Decode(JSON, []byte(body), &in); err != nil || in.PlayerDataMap["playerdatamap"] != "x" {
		t.Errorf("got %v (%v)", in.PlayerDataMap, err)
	}
}
