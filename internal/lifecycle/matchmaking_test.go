package lifecycle_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/game"
	sdk "github.com/anylift/anylift/sdk/server"
)

// arenaRules: two teams of one or two players.
const arenaRules = `{"name":"arena","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10},{"name":"modes","type":"string_list","default":["any"]}],
 "teams":[{"name":"red","maxPlayers":2,"minPlayers":1},{"name":"blue","maxPlayers":2,"minPlayers":1}]}`

func (h *harness) matchConfig(queueARN string, backfill types.BackfillMode) string {
	h.t.Helper()
	ctx := h.t.Context()
	if _, err := h.gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("arena"), RuleSetBody: aws.String(arenaRules)}); err != nil {
		h.t.Fatal(err)
	}
	out, err := h.gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("arena"),
		RuleSetName: aws.String("arena"), RequestTimeoutSeconds: aws.Int32(60), AcceptanceRequired: aws.Bool(false),
		GameSessionQueueArns: []string{queueARN}, GameSessionData: aws.String("gsd"), CustomEventData: aws.String("ced"),
		GameProperties:     []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ctf")}},
		NotificationTarget: aws.String("https://hooks.example.com/mm"), FlexMatchMode: types.FlexMatchModeWithQueue, BackfillMode: backfill})
	if err != nil {
		h.t.Fatal(err)
	}
	return aws.ToString(out.Configuration.ConfigurationArn)
}

func (h *harness) startTicket(id, player string, skill float64) {
	h.t.Helper()
	_, err := h.gl.StartMatchmaking(h.t.Context(), &gamelift.StartMatchmakingInput{TicketId: aws.String(id), ConfigurationName: aws.String("arena"),
		Players: []types.Player{{PlayerId: aws.String(player), PlayerAttributes: map[string]types.AttributeValue{"skill": {N: aws.Float64(skill)}},
			LatencyInMs: map[string]int32{testLocation: 20}}}})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) matchTicket(id string) types.MatchmakingTicket {
	h.t.Helper()
	out, err := h.gl.DescribeMatchmaking(h.t.Context(), &gamelift.DescribeMatchmakingInput{TicketIds: []string{id, "unknown"}})
	if err != nil || len(out.TicketList) != 1 {
		h.t.Fatalf("DescribeMatchmaking %s: %v %v", id, out, err)
	}
	return out.TicketList[0]
}

// sdkMatchmakerData is MatchmakerData as a game server parses it.
type sdkMatchmakerData struct {
	MatchID          string `json:"matchId"`
	ConfigurationARN string `json:"matchmakingConfigurationArn"`
	Teams            []struct {
		Name    string `json:"name"`
		Players []struct {
			PlayerID   string `json:"playerId"`
			Attributes map[string]struct {
				Type  string          `json:"attributeType"`
				Value json.RawMessage `json:"valueAttribute"`
			} `json:"attributes"`
		} `json:"players"`
	} `json:"teams"`
	AutoBackfillMode   *string `json:"autoBackfillMode"`
	AutoBackfillTicket *string `json:"autoBackfillTicketId"`
}

func TestMatchReachesGoSDKProcessAndIsBackfilled(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		g := h.goProcess("host-1", "go-1", h.compute("host-1", "10.0.0.5"))
		q := h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("mm"), Destinations: dest(h.fleet)})
		cfgARN := h.matchConfig(aws.ToString(q.GameSessionQueueArn), types.BackfillModeManual)
		h.startTicket("t1", "p1", 10)
		h.startTicket("t2", "p2", 12)
		started := sweepUntil(h, "the match placed on the process", g.started)
		if started.GameProperties["mode"] != "ctf" || started.GameSessionData != "gsd" || started.MaximumPlayerSessionCount != 4 {
			t.Errorf("OnStartGameSession %+v", started)
		}
		var md sdkMatchmakerData
		if err := json.Unmarshal([]byte(started.MatchmakerData), &md); err != nil {
			t.Fatalf("MatchmakerData %q: %v", started.MatchmakerData, err)
		}
		if md.MatchID == "" || md.ConfigurationARN != cfgARN || len(md.Teams) != 2 || aws.ToString(md.AutoBackfillMode) != "MANUAL" || md.AutoBackfillTicket != nil {
			t.Fatalf("MatchmakerData %s", started.MatchmakerData)
		}
		if !strings.Contains(started.MatchmakerData, `"skill":{"attributeType":"DOUBLE","valueAttribute":10.0}`) ||
			!strings.Contains(started.MatchmakerData, `"modes":{"attributeType":"STRING_LIST","valueAttribute":["any"]}`) {
			t.Errorf("attributes in %s", started.MatchmakerData)
		}
		if got := h.matchTicket("t1"); got.Status != types.MatchmakingConfigurationStatusPlacing {
			t.Errorf("before activation: %s", got.Status)
		}
		if err := g.p.ActivateGameSession(); err != nil {
			t.Fatal(err)
		}
		t1 := h.matchTicket("t1")
		ci := t1.GameSessionConnectionInfo
		if t1.Status != types.MatchmakingConfigurationStatusCompleted || ci == nil || aws.ToString(ci.GameSessionArn) != started.GameSessionID ||
			aws.ToString(ci.IpAddress) != "10.0.0.5" || aws.ToInt32(ci.Port) != 9000 || len(ci.MatchedPlayerSessions) != 1 ||
			!strings.HasPrefix(aws.ToString(ci.MatchedPlayerSessions[0].PlayerSessionId), "psess-") {
			t.Fatalf("completed ticket %+v / %+v", t1, ci)
		}
		if h.playerStatus(aws.ToString(ci.MatchedPlayerSessions[0].PlayerSessionId)) != types.PlayerSessionStatusReserved {
			t.Errorf("matched player session not RESERVED")
		}
		var succeeded map[string]any
		for _, n := range h.notifications() {
			if n.Type == "MatchmakingSucceeded" {
				succeeded = mmDetail(t, n)
				if n.Target != "https://hooks.example.com/mm" || n.Resource != cfgARN {
					t.Errorf("notification %+v", n)
				}
			}
		}
		info, _ := succeeded["gameSessionInfo"].(map[string]any)
		if info["gameSessionArn"] != started.GameSessionID || info["ipAddress"] != "10.0.0.5" || succeeded["matchId"] != md.MatchID || succeeded["customEventData"] != "ced" {
			t.Errorf("MatchmakingSucceeded %v", succeeded)
		}

		// The game server asks for one more player through the SDK.
		var players []sdk.Player
		for _, team := range md.Teams {
			for _, p := range team.Players {
				players = append(players, sdk.Player{PlayerID: p.PlayerID, Team: team.Name,
					PlayerAttributes: map[string]sdk.AttributeValue{"skill": {AttrType: "DOUBLE", N: 10}}})
			}
		}
		res, err := g.p.StartMatchBackfill(sdk.StartMatchBackfillRequest{GameSessionArn: started.GameSessionID,
			MatchmakingConfigurationArn: cfgARN, Players: players})
		if err != nil || res.TicketID == "" {
			t.Fatalf("StartMatchBackfill %v %v", res, err)
		}
		if bf := h.matchTicket(res.TicketID); aws.ToString(bf.GameSessionConnectionInfo.GameSessionArn) != started.GameSessionID {
			t.Errorf("backfill ticket %+v", bf)
		}
		h.startTicket("t3", "p3", 11)
		u := sweepUntil(h, "the backfill", g.updated)
		if u.UpdateReason != "MATCHMAKING_DATA_UPDATED" || u.BackfillTicketID != res.TicketID {
			t.Fatalf("OnUpdateGameSession %+v", u)
		}
		var after sdkMatchmakerData
		if err := json.Unmarshal([]byte(u.GameSession.MatchmakerData), &after); err != nil || after.MatchID != md.MatchID ||
			!strings.Contains(u.GameSession.MatchmakerData, `"playerId":"p3"`) || !strings.Contains(u.GameSession.MatchmakerData, `"playerId":"p1"`) {
			t.Errorf("backfilled MatchmakerData %s", u.GameSession.MatchmakerData)
		}
		t3 := h.matchTicket("t3")
		if t3.Status != types.MatchmakingConfigurationStatusCompleted || aws.ToString(t3.GameSessionConnectionInfo.GameSessionArn) != started.GameSessionID {
			t.Errorf("new player's ticket %+v", t3)
		}
		if bf := h.matchTicket(res.TicketID); bf.Status != types.MatchmakingConfigurationStatusCompleted {
			t.Errorf("backfill ticket %s", bf.Status)
		}

		// A second request stopped by the server: BACKFILL_CANCELLED.
		res2, err := g.p.StartMatchBackfill(sdk.StartMatchBackfillRequest{GameSessionArn: started.GameSessionID,
			MatchmakingConfigurationArn: cfgARN, Players: players})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.p.StopMatchBackfill(sdk.StopMatchBackfillRequest{GameSessionArn: started.GameSessionID,
			MatchmakingConfigurationArn: cfgARN, TicketID: res2.TicketID}); err != nil {
			t.Fatal(err)
		}
		if u := receive(t, "BACKFILL_CANCELLED", g.updated); u.UpdateReason != "BACKFILL_CANCELLED" || u.BackfillTicketID != res2.TicketID {
			t.Errorf("OnUpdateGameSession %+v", u)
		}
		if bf := h.matchTicket(res2.TicketID); bf.Status != types.MatchmakingConfigurationStatusCancelled {
			t.Errorf("stopped backfill ticket %s", bf.Status)
		}
	})
}

// mmDetail decodes a matchmaking event's detail, checking its envelope.
func mmDetail(t *testing.T, n *game.Notification) map[string]any {
	t.Helper()
	var env struct {
		DetailType string         `json:"detail-type"`
		Source     string         `json:"source"`
		Resources  []string       `json:"resources"`
		Detail     map[string]any `json:"detail"`
	}
	if err := json.Unmarshal(n.Envelope, &env); err != nil {
		t.Fatal(err)
	}
	if env.DetailType != "GameLift Matchmaking Event" || env.Source != "aws.gamelift" || len(env.Resources) != 1 || env.Resources[0] != n.Resource {
		t.Errorf("envelope %s", n.Envelope)
	}
	return env.Detail
}

// placeMatch starts two tickets and waits for their match to start on g.
func (h *harness) placeMatch(g *goProcess) sdk.GameSession {
	h.t.Helper()
	h.startTicket("t1", "p1", 10)
	h.startTicket("t2", "p2", 12)
	started := sweepUntil(h, "the match placed on the process", g.started)
	if err := g.p.ActivateGameSession(); err != nil {
		h.t.Fatal(err)
	}
	return started
}

// sweepUntil runs the timers until c yields a value, and returns it.
func sweepUntil[T any](h *harness, what string, c <-chan T) T {
	h.t.Helper()
	var v T
	waitFor(h.t, what, func() bool {
		h.sweep()
		select {
		case v = <-c:
			return true
		default:
			return false
		}
	})
	return v
}

func (h *harness) matchmakerData(gameSessionID string) sdkMatchmakerData {
	h.t.Helper()
	var md sdkMatchmakerData
	raw := aws.ToString(h.session(gameSessionID).MatchmakerData)
	if err := json.Unmarshal([]byte(raw), &md); err != nil {
		h.t.Fatalf("MatchmakerData %q: %v", raw, err)
	}
	return md
}

func TestAutomaticBackfill(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		g := h.goProcess("host-1", "go-1", h.compute("host-1", "10.0.0.5"))
		q := h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("mm"), Destinations: dest(h.fleet)})
		h.matchConfig(aws.ToString(q.GameSessionQueueArn), types.BackfillModeAutomatic)
		started := h.placeMatch(g)
		md := h.matchmakerData(started.GameSessionID)
		auto := aws.ToString(md.AutoBackfillTicket)
		if aws.ToString(md.AutoBackfillMode) != "AUTOMATIC" || auto == "" {
			t.Fatalf("MatchmakerData after the match: %+v", md)
		}
		bf := h.matchTicket(auto)
		if bf.Status != types.MatchmakingConfigurationStatusQueued || aws.ToString(bf.GameSessionConnectionInfo.GameSessionArn) != started.GameSessionID || len(bf.Players) != 2 {
			t.Fatalf("automatic backfill ticket %+v", bf)
		}
		// A ticket that times out is followed by the next one.
		h.advance(60 * time.Second)
		if u := receive(t, "BACKFILL_TIMED_OUT", g.updated); u.UpdateReason != "BACKFILL_TIMED_OUT" || u.BackfillTicketID != auto {
			t.Errorf("OnUpdateGameSession %+v", u)
		}
		if bf := h.matchTicket(auto); bf.Status != types.MatchmakingConfigurationStatusTimedOut {
			t.Errorf("timed-out automatic ticket %s", bf.Status)
		}
		auto = aws.ToString(h.matchmakerData(started.GameSessionID).AutoBackfillTicket)
		if bf := h.matchTicket(auto); bf.Status != types.MatchmakingConfigurationStatusSearching || !bf.StartTime.Equal(h.clock.Now()) {
			t.Fatalf("replacement automatic ticket %+v", bf)
		}
		h.startTicket("t3", "p3", 11)
		u := sweepUntil(h, "the automatic backfill", g.updated)
		if u.UpdateReason != "MATCHMAKING_DATA_UPDATED" || u.BackfillTicketID != auto {
			t.Fatalf("OnUpdateGameSession %+v", u)
		}
		// One slot is left: the next automatic ticket is waiting, and
		// StopMatchmaking on it switches automatic backfill off.
		next := aws.ToString(h.matchmakerData(started.GameSessionID).AutoBackfillTicket)
		if next == "" || next == auto {
			t.Fatalf("next automatic ticket %q", next)
		}
		if _, err := h.gl.StopMatchmaking(t.Context(), &gamelift.StopMatchmakingInput{TicketId: aws.String(next)}); err != nil {
			t.Fatal(err)
		}
		if u := receive(t, "BACKFILL_CANCELLED", g.updated); u.UpdateReason != "BACKFILL_CANCELLED" || u.BackfillTicketID != next {
			t.Errorf("OnUpdateGameSession %+v", u)
		}
	})
}

func TestMatchPlacementRetriedUntilRequestTimeout(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		q := h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("mm"), Destinations: dest(h.fleet), TimeoutInSeconds: aws.Int32(25)})
		h.matchConfig(aws.ToString(q.GameSessionQueueArn), types.BackfillModeManual)
		h.startTicket("t1", "p1", 10)
		h.startTicket("t2", "p2", 12)
		h.sweep()
		if got := h.matchTicket("t1"); got.Status != types.MatchmakingConfigurationStatusPlacing {
			t.Fatalf("without capacity: %s", got.Status)
		}
		h.advance(25 * time.Second) // the first placement times out and is placed again
		h.advance(25 * time.Second) // and again
		if got := h.matchTicket("t1"); got.Status != types.MatchmakingConfigurationStatusPlacing {
			t.Fatalf("after two placement time-outs: %s", got.Status)
		}
		h.advance(10 * time.Second) // past the 60 s request timeout: the third placement is cancelled
		for _, id := range []string{"t1", "t2"} {
			if got := h.matchTicket(id); got.Status != types.MatchmakingConfigurationStatusTimedOut || aws.ToString(got.StatusReason) != "TIMED_OUT" {
				t.Errorf("ticket %s: %s", id, got.Status)
			}
		}
		timedOut := 0
		for _, n := range h.notifications() {
			if n.Type == "MatchmakingTimedOut" {
				if d := mmDetail(t, n); d["reason"] != "TimedOut" || d["matchId"] == nil {
					t.Errorf("MatchmakingTimedOut %v", d)
				}
				timedOut++
			}
		}
		if timedOut != 2 {
			t.Errorf("%d MatchmakingTimedOut events", timedOut)
		}
	})
}

func TestMatchFailsWhenItsQueueGoes(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		q := h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("mm"), Destinations: dest(h.fleet)})
		h.matchConfig(aws.ToString(q.GameSessionQueueArn), types.BackfillModeManual)
		h.startTicket("t1", "p1", 10)
		h.startTicket("t2", "p2", 12)
		h.sweep()
		if _, err := h.gl.DeleteGameSessionQueue(t.Context(), &gamelift.DeleteGameSessionQueueInput{Name: aws.String("mm")}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"t1", "t2"} {
			if got := h.matchTicket(id); got.Status != types.MatchmakingConfigurationStatusFailed || aws.ToString(got.StatusReason) != "UNEXPECTED_ERROR" {
				t.Errorf("ticket %s: %s", id, got.Status)
			}
		}
		failed := 0
		for _, n := range h.notifications() {
			if n.Type == "MatchmakingFailed" {
				if d := mmDetail(t, n); d["reason"] != "UNEXPECTED_ERROR" || d["message"] != "An unexpected error was encountered during match placing." || d["customEventData"] != "ced" {
					t.Errorf("MatchmakingFailed %v", d)
				}
				failed++
			}
		}
		if failed != 2 {
			t.Errorf("%d MatchmakingFailed events, want one per ticket", failed)
		}
	})
}
