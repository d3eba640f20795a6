package lifecycle_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

// reserve creates a player session in game session id.
func (h *harness) reserve(id, player string) string {
	h.t.Helper()
	out, err := h.gl.CreatePlayerSession(h.t.Context(), &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String(player)})
	if err != nil {
		h.t.Fatal(err)
	}
	return aws.ToString(out.PlayerSession.PlayerSessionId)
}

func (h *harness) playerStatus(psID string) types.PlayerSessionStatus {
	h.t.Helper()
	out, err := h.gl.DescribePlayerSessions(h.t.Context(), &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(psID)})
	if err != nil || len(out.PlayerSessions) != 1 {
		h.t.Fatalf("DescribePlayerSessions(%s): %v", psID, err)
	}
	return out.PlayerSessions[0].Status
}

func TestProcessCannotTouchAnotherProcessesSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		a, b, idle := h.dial("host-1", "proc-a", tok), h.dial("host-1", "proc-b", tok), h.dial("host-1", "proc-idle", tok)
		a.ready(7001)
		b.ready(7002)
		gsA := aws.ToString(h.mustCreate(nil).GameSessionId)
		a.push("CreateGameSession")
		gsB := aws.ToString(h.mustCreate(nil).GameSessionId)
		b.push("CreateGameSession")
		idle.ready(7003)
		a.ok("ActivateGameSession", map[string]any{"GameSessionId": gsA})
		psA := h.reserve(gsA, "alice")

		refused := []struct {
			name   string
			p      *rawProc
			action string
			fields map[string]any
		}{
			{"activate another's", b, "ActivateGameSession", map[string]any{"GameSessionId": gsA}},
			{"activate with no session", idle, "ActivateGameSession", map[string]any{"GameSessionId": gsA}},
			{"policy of another's", b, "UpdatePlayerSessionCreationPolicy", map[string]any{"GameSessionId": gsA, "PlayerSessionPolicy": "DENY_ALL"}},
			{"accept in another's", b, "AcceptPlayerSession", map[string]any{"GameSessionId": gsA, "PlayerSessionId": psA}},
			{"accept another's player in own", b, "AcceptPlayerSession", map[string]any{"GameSessionId": gsB, "PlayerSessionId": psA}},
			{"remove in another's", b, "RemovePlayerSession", map[string]any{"GameSessionId": gsA, "PlayerSessionId": psA}},
			{"remove another's player in own", b, "RemovePlayerSession", map[string]any{"GameSessionId": gsB, "PlayerSessionId": psA}},
			{"describe another's", b, "DescribePlayerSessions", map[string]any{"GameSessionId": gsA}},
			{"accept unknown player", a, "AcceptPlayerSession", map[string]any{"GameSessionId": gsA, "PlayerSessionId": "psess-unknown"}},
		}
		for _, tc := range refused {
			ans := tc.p.call(tc.action, tc.fields)
			if s := status(ans); s < 400 || s >= 500 {
				t.Errorf("%s: StatusCode %d, want a 4xx: %v", tc.name, s, ans)
			}
			if msg, _ := ans["ErrorMessage"].(string); msg == "" {
				t.Errorf("%s: no ErrorMessage: %v", tc.name, ans)
			}
		}
		// Describing by player session or player id from another process
		// shows nothing of A's session.
		for _, f := range []map[string]any{{"PlayerSessionId": psA}, {"PlayerId": "alice"}} {
			ans := b.call("DescribePlayerSessions", f)
			if list, _ := ans["PlayerSessions"].([]any); status(ans) == 200 && len(list) != 0 {
				t.Errorf("DescribePlayerSessions %v from another process: %v", f, ans)
			}
		}
		h.wantSession(gsA, types.GameSessionStatusActive, "")
		h.wantSession(gsB, types.GameSessionStatusActivating, "")
		if got := h.session(gsA).PlayerSessionCreationPolicy; got != types.PlayerSessionCreationPolicyAcceptAll {
			t.Errorf("policy of A's session = %s", got)
		}
		if got := h.playerStatus(psA); got != types.PlayerSessionStatusReserved {
			t.Errorf("A's player session is %s, want RESERVED", got)
		}

		// A itself may.
		a.ok("AcceptPlayerSession", map[string]any{"GameSessionId": gsA, "PlayerSessionId": psA})
		ans := a.ok("DescribePlayerSessions", map[string]any{"GameSessionId": gsA})
		list, _ := ans["PlayerSessions"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["Status"] != "ACTIVE" || list[0].(map[string]any)["PlayerSessionId"] != psA {
			t.Errorf("A describes its session: %v", ans)
		}
		a.ok("RemovePlayerSession", map[string]any{"GameSessionId": gsA, "PlayerSessionId": psA})
		if got := h.playerStatus(psA); got != types.PlayerSessionStatusCompleted {
			t.Errorf("after RemovePlayerSession: %s", got)
		}
		a.ok("UpdatePlayerSessionCreationPolicy", map[string]any{"GameSessionId": gsA, "PlayerSessionPolicy": "DENY_ALL"})
		if got := h.session(gsA).PlayerSessionCreationPolicy; got != types.PlayerSessionCreationPolicyDenyAll {
			t.Errorf("policy after the process's update = %s", got)
		}
	})
}
