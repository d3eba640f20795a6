package lifecycle_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

func TestCreateGameSessionReachesProcessAndActivates(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		p := h.dial("host-1", "proc-1", tok)
		p.ready(7777)

		data := `{"seed":42,"text":"ünïcode \"quoted\""}`
		gs := h.mustCreate(&gamelift.CreateGameSessionInput{
			Name: aws.String("duel"), MaximumPlayerSessionCount: aws.Int32(8), GameSessionData: aws.String(data),
			GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ctf")}, {Key: aws.String("map"), Value: aws.String("dust")}},
		})
		if gs.Status != types.GameSessionStatusActivating {
			t.Fatalf("Status = %s, want ACTIVATING", gs.Status)
		}
		// GameLift's answer on an Anywhere fleet leaves the compute out.
		if gs.ComputeName != nil || aws.ToString(gs.Location) != testLocation {
			t.Errorf("ComputeName, Location = %v, %q; want none, %s", gs.ComputeName, aws.ToString(gs.Location), testLocation)
		}
		if got := h.session(aws.ToString(gs.GameSessionId)); aws.ToString(got.ComputeName) != "host-1" {
			t.Errorf("DescribeGameSessions ComputeName = %q, want host-1", aws.ToString(got.ComputeName))
		}

		m := p.push("CreateGameSession")
		if _, has := m["RequestId"]; has {
			t.Errorf("push carries a RequestId: %v", m)
		}
		want := map[string]any{
			"StatusCode": json.Number("200"), "GameSessionId": aws.ToString(gs.GameSessionId), "GameSessionName": "duel",
			"MaximumPlayerSessionCount": json.Number("8"), "Port": json.Number("7777"), "IpAddress": "10.0.0.5",
			"GameSessionData": data,
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("push %s = %#v, want %#v", k, m[k], v)
			}
		}
		props, ok := m["GameProperties"].(map[string]any)
		if !ok || len(props) != 2 || props["mode"] != "ctf" || props["map"] != "dust" {
			t.Errorf("push GameProperties = %#v, want the object {mode: ctf, map: dust}", m["GameProperties"])
		}

		p.ok("ActivateGameSession", map[string]any{"GameSessionId": aws.ToString(gs.GameSessionId)})
		got := h.session(aws.ToString(gs.GameSessionId))
		if got.Status != types.GameSessionStatusActive || aws.ToString(got.IpAddress) != "10.0.0.5" || aws.ToInt32(got.Port) != 7777 {
			t.Errorf("after ActivateGameSession: %s %s:%d, want ACTIVE 10.0.0.5:7777", got.Status, aws.ToString(got.IpAddress), aws.ToInt32(got.Port))
		}

		// One game session per process, for its whole life.
		_, err := h.create(nil)
		wantAPIError(t, err, "FleetCapacityExceededException")
	})
}

func TestActivateGameSessionReportsDnsName(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		_, err := h.gl.RegisterCompute(t.Context(), &gamelift.RegisterComputeInput{FleetId: aws.String(h.fleet),
			ComputeName: aws.String("host-dns"), Location: aws.String(testLocation), IpAddress: aws.String("10.0.0.9"), DnsName: aws.String("game-1.example.com")})
		if err != nil {
			t.Fatal(err)
		}
		p := h.dial("host-dns", "proc-1", h.token("host-dns"))
		p.ready(4000)
		gs := h.mustCreate(nil)
		if m := p.push("CreateGameSession"); m["DnsName"] != "game-1.example.com" {
			t.Errorf("push DnsName = %v", m["DnsName"])
		}
		p.ok("ActivateGameSession", map[string]any{"GameSessionId": aws.ToString(gs.GameSessionId)})
		got := h.session(aws.ToString(gs.GameSessionId))
		if got.Status != types.GameSessionStatusActive || aws.ToString(got.DnsName) != "game-1.example.com" || aws.ToInt32(got.Port) != 4000 {
			t.Errorf("after ActivateGameSession: %s %s:%d", got.Status, aws.ToString(got.DnsName), aws.ToInt32(got.Port))
		}
	})
}
