package sdkwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// Request frames as the Go SDK 5.6.0 sent them (server-sdk-protocol.md §3).
var goldenRequests = []struct {
	frame string
	want  Request
}{
	{`{"Action":"ActivateServerProcess","RequestId":"3c24e920-1","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":["/tmp/a.log"]}`,
		&ActivateServerProcess{SdkVersion: "5.6.0", SdkLanguage: "Go", Port: 7777, LogPaths: []string{"/tmp/a.log"}}},
	{`{"Action":"HeartbeatServerProcess","RequestId":"799acce6-1","HealthStatus":true}`,
		&HeartbeatServerProcess{HealthStatus: true}},
	{`{"Action":"UpdatePlayerSessionCreationPolicy","RequestId":"d95b-1","GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom/gsess-1","PlayerSessionPolicy":"DENY_ALL"}`,
		&UpdatePlayerSessionCreationPolicy{GameSessionId: "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom/gsess-1", PlayerSessionPolicy: "DENY_ALL"}},
	{`{"Action":"DescribePlayerSessions","RequestId":"f854-1","GameSessionId":"gsess-1","PlayerSessionStatusFilter":"ACTIVE","Limit":10}`,
		&DescribePlayerSessions{GameSessionId: "gsess-1", PlayerSessionStatusFilter: "ACTIVE", Limit: 10}},
	{`{"Action":"GetFleetRoleCredentials","RequestId":"78c1-1","RoleArn":"arn:aws:iam::123456789012:role/r","RoleSessionName":"fleet-1-compute-1"}`,
		&GetFleetRoleCredentials{RoleArn: "arn:aws:iam::123456789012:role/r", RoleSessionName: "fleet-1-compute-1"}},
	{`{"Action":"TerminateServerProcess","RequestId":"c4eb-1"}`, &TerminateServerProcess{}},
	{`{"Action":"StartMatchBackfill","RequestId":"r1","GameSessionArn":"arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1","MatchmakingConfigurationArn":"arn:aws:gamelift:us-west-2:123456789012:matchmakingconfiguration/c","TicketId":"","Players":[{"PlayerId":"p1","PlayerAttributes":{"mode":{"AttrType":"STRING","S":"dm"},"skill":{"AttrType":"DOUBLE","N":23}},"LatencyInMs":{"us-west-2":20}}]}`,
		&StartMatchBackfill{GameSessionArn: "arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1", MatchmakingConfigurationArn: "arn:aws:gamelift:us-west-2:123456789012:matchmakingconfiguration/c",
			Players: []Player{{PlayerId: "p1", PlayerAttributes: map[string]AttributeValue{"mode": {AttrType: "STRING", S: "dm"}, "skill": {AttrType: "DOUBLE", N: 23}}, LatencyInMs: map[string]int{"us-west-2": 20}}}}},
	// C# may send optional members as explicit nulls; C++ omits empty ones.
	{`{"Action":"ActivateServerProcess","RequestId":"x","SdkVersion":"5.4.0","SdkLanguage":"CSharp","SdkToolName":null,"LogPaths":null,"Port":7777}`,
		&ActivateServerProcess{SdkVersion: "5.4.0", SdkLanguage: "CSharp", Port: 7777}},
	{`{"Action":"ActivateServerProcess","RequestId":"y","SdkVersion":"5.4.0","SdkLanguage":"Cpp","Unknown":{"a":1}}`,
		&ActivateServerProcess{SdkVersion: "5.4.0", SdkLanguage: "Cpp"}},
}

func TestDecodeGoldenRequests(t *testing.T) {
	for _, g := range goldenRequests {
		f, r, err := DecodeRequest([]byte(g.frame))
		if err != nil {
			t.Fatalf("%s: %v", g.frame, err)
		}
		if !reflect.DeepEqual(r, g.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", g.frame, r, g.want)
		}
		if f.Action != g.want.Action() || f.RequestId == "" {
			t.Errorf("%s: header %+v", g.frame, f.Header)
		}
	}
}

// The Go SDK's request frames re-encode to themselves (member names, types
// and presence), except where it writes members ours leaves out.
func TestEncodeRequestsLikeGoSDK(t *testing.T) {
	for _, g := range goldenRequests[:7] {
		f, _, _ := DecodeRequest([]byte(g.frame))
		b, err := EncodeRequest(f.RequestId, g.want)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, b, []byte(g.frame)) {
			t.Errorf("encoded\n %s\nwant\n %s", b, g.frame)
		}
	}
}

// Push frames as they were observed to work with the Go SDK (§4).
func TestEncodeGoldenPushes(t *testing.T) {
	cases := []struct {
		push Push
		want string
	}{
		{&CreateGameSession{GameSessionId: "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom/gsess-1", GameSessionName: "name1", MaximumPlayerSessionCount: 4, Port: 7777, IpAddress: "127.0.0.1", DnsName: "localhost", GameSessionData: "data", GameProperties: map[string]string{"k": "v"}},
			`{"Action":"CreateGameSession","StatusCode":200,"DnsName":"localhost","GameProperties":{"k":"v"},"GameSessionData":"data","GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom/gsess-1","GameSessionName":"name1","IpAddress":"127.0.0.1","MatchmakerData":"","MaximumPlayerSessionCount":4,"Port":7777}`},
		{&RefreshConnection{AuthToken: "new-token", RefreshConnectionEndpoint: "ws://127.0.0.1:18083/refreshed"},
			`{"Action":"RefreshConnection","StatusCode":200,"AuthToken":"new-token","RefreshConnectionEndpoint":"ws://127.0.0.1:18083/refreshed"}`},
		{&TerminateProcess{TerminationTime: 1795316569128},
			`{"Action":"TerminateProcess","StatusCode":200,"TerminationTime":1795316569128}`},
		{&UpdateGameSession{GameSession: GameSession{GameSessionId: "g", Name: "n", FleetId: "fleet-1", MaximumPlayerSessionCount: 2, GameProperties: map[string]string{}}, UpdateReason: "MATCHMAKING_DATA_UPDATED", BackfillTicketId: "t"},
			`{"Action":"UpdateGameSession","StatusCode":200,"GameSession":{"GameSessionId":"g","Name":"n","FleetId":"fleet-1","MaximumPlayerSessionCount":2,"Port":0,"IpAddress":"","DnsName":"","GameSessionData":"","MatchmakerData":"","GameProperties":{}},"UpdateReason":"MATCHMAKING_DATA_UPDATED","BackfillTicketId":"t"}`},
	}
	for _, c := range cases {
		b, err := EncodePush(c.push)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, b, []byte(c.want)) {
			t.Errorf("encoded\n %s\nwant\n %s", b, c.want)
		}
		if strings.Contains(string(b), "RequestId") {
			t.Errorf("push carries a RequestId: %s", b)
		}
		f, err := DecodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		p, err := DecodePush(f)
		if err != nil || !reflect.DeepEqual(p, c.push) {
			t.Errorf("round trip: %#v, %v", p, err)
		}
	}
}

func TestEncodeResponses(t *testing.T) {
	b, _ := EncodeResponse(ActionHeartbeatServerProcess, "r1", nil)
	if string(b) != `{"Action":"HeartbeatServerProcess","RequestId":"r1","StatusCode":200}` {
		t.Errorf("plain success: %s", b)
	}
	b, _ = EncodeResponse(ActionDescribePlayerSessions, "r2", &DescribePlayerSessionsResult{PlayerSessions: []PlayerSession{}})
	if string(b) != `{"Action":"DescribePlayerSessions","RequestId":"r2","StatusCode":200,"PlayerSessions":[]}` {
		t.Errorf("describe: %s", b)
	}
	b, _ = EncodeResponse(ActionGetFleetRoleCredentials, "r3", &GetFleetRoleCredentialsResult{Expiration: 1700000000000})
	if !sameJSON(t, b, []byte(`{"Action":"GetFleetRoleCredentials","RequestId":"r3","StatusCode":200,"AssumedRoleUserArn":"","AssumedRoleId":"","AccessKeyId":"","SecretAccessKey":"","SessionToken":"","Expiration":1700000000000}`)) {
		t.Errorf("credentials: %s", b)
	}
	b = EncodeError(ActionAcceptPlayerSession, "r4", 400, "Invalid player session")
	if string(b) != `{"Action":"AcceptPlayerSession","RequestId":"r4","StatusCode":400,"ErrorMessage":"Invalid player session"}` {
		t.Errorf("error: %s", b)
	}
	if b := EncodeError(ActionCreateGameSession, "r5", 400, "x"); strings.Contains(string(b), "CreateGameSession") {
		t.Errorf("error echoes a push action: %s", b)
	}
}

func TestDecodeRequestRefusals(t *testing.T) {
	cases := []struct {
		frame   string
		garbage bool
		msg     string
	}{
		{`not json`, true, "not a JSON object"},
		{`[1,2]`, true, "not a JSON object"},
		{`null`, true, "not a JSON object"},
		{`"x"`, true, "not a JSON object"},
		{`{"Action":"A"} trailing`, true, "not a JSON object"},
		{`{"RequestId":"r"}`, false, "Action is required"},
		{`{"Action":7,"RequestId":"r"}`, false, "Action must be a string"},
		{`{"Action":"HeartbeatServerProcess","HealthStatus":true}`, false, "RequestId is required"},
		{`{"Action":"Fly","RequestId":"r"}`, false, `unknown Action "Fly"`},
		{`{"Action":"CreateGameSession","RequestId":"r"}`, false, `unknown Action "CreateGameSession"`},
		{`{"Action":"HeartbeatServerProcess","RequestId":"r"}`, false, "HealthStatus is required"},
		{`{"Action":"HeartbeatServerProcess","RequestId":"r","HealthStatus":"yes"}`, false, "HealthStatus must be a boolean"},
		{`{"Action":"AcceptPlayerSession","RequestId":"r","GameSessionId":"g"}`, false, "PlayerSessionId is required"},
		{`{"Action":"AcceptPlayerSession","RequestId":"r","GameSessionId":"g","PlayerSessionId":""}`, false, "PlayerSessionId must not be empty"},
		{`{"Action":"AcceptPlayerSession","RequestId":"r","GameSessionId":1,"PlayerSessionId":"p"}`, false, "GameSessionId must be a string"},
		{`{"Action":"ActivateServerProcess","RequestId":"r","SdkVersion":"5","SdkLanguage":"Go","Port":77.5}`, false, "Port must be an integer"},
		{`{"Action":"ActivateServerProcess","RequestId":"r","SdkVersion":"5","SdkLanguage":"Go","Port":"7777"}`, false, "Port must be an integer"},
		{`{"Action":"ActivateServerProcess","RequestId":"r","SdkVersion":"5","SdkLanguage":"Go","LogPaths":"/a"}`, false, "LogPaths must be a list"},
		{`{"Action":"ActivateServerProcess","RequestId":"r","SdkVersion":"5","SdkLanguage":"Go","LogPaths":[1]}`, false, "LogPaths is malformed"},
		{`{"Action":"UpdatePlayerSessionCreationPolicy","RequestId":"r","GameSessionId":"g","PlayerSessionPolicy":"SOME"}`, false, "PlayerSessionPolicy must be one of ACCEPT_ALL, DENY_ALL"},
		{`{"Action":"DescribePlayerSessions","RequestId":"r"}`, false, "exactly one of"},
		{`{"Action":"DescribePlayerSessions","RequestId":"r","PlayerId":"p","GameSessionId":"g"}`, false, "exactly one of"},
		{`{"Action":"DescribePlayerSessions","RequestId":"r","PlayerId":"p","PlayerSessionStatusFilter":"GONE"}`, false, "PlayerSessionStatusFilter must be one of"},
		{`{"Action":"StartMatchBackfill","RequestId":"r","GameSessionArn":"a","MatchmakingConfigurationArn":"m","Players":[]}`, false, "Players must not be empty"},
		{`{"Action":"StartMatchBackfill","RequestId":"r","GameSessionArn":"a","MatchmakingConfigurationArn":"m","Players":[{"PlayerId":"p","LatencyInMs":{"x":1.5}}]}`, false, "Players is malformed"},
	}
	for _, c := range cases {
		_, _, err := DecodeRequest([]byte(c.frame))
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%s: error %v, want *Error", c.frame, err)
			continue
		}
		if e.Garbage != c.garbage || e.Status != 400 || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: got %+v, want garbage=%v status 400 containing %q", c.frame, e, c.garbage, c.msg)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, g := range goldenRequests {
		f.Add([]byte(g.frame))
	}
	f.Add([]byte(`{"Action":"AcceptPlayerSession","RequestId":"r","GameSessionId":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, r, err := DecodeRequest(data)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != 400 || e.Message == "" {
				t.Fatalf("error %#v", err)
			}
			if fr != nil {
				EncodeError(fr.Action, fr.RequestId, 400, err.Error())
			}
			return
		}
		b, err := EncodeRequest(fr.RequestId, r)
		if err != nil {
			t.Fatal(err)
		}
		_, r2, err := DecodeRequest(b)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		b2, _ := EncodeRequest(fr.RequestId, r2)
		if string(b) != string(b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
	})
}
