package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

func TestMatchmakingConfigurationsAndTickets(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			if _, err := gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("duel"), RuleSetBody: aws.String(duelRules)}); err != nil {
				t.Fatal(err)
			}
			in := &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("solo"), RuleSetName: aws.String("duel"),
				RequestTimeoutSeconds: aws.Int32(120), AcceptanceRequired: aws.Bool(false), FlexMatchMode: types.FlexMatchModeStandalone,
				NotificationTarget: aws.String("https://hooks.example.com/mm"), CustomEventData: aws.String("x"),
				Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}
			out, err := gl.CreateMatchmakingConfiguration(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			c := out.Configuration
			arn := "arn:aws:gamelift:us-west-2:123456789012:matchmakingconfiguration/solo"
			if aws.ToString(c.ConfigurationArn) != arn || aws.ToString(c.RuleSetArn) != "arn:aws:gamelift:us-west-2:123456789012:matchmakingruleset/duel" ||
				c.BackfillMode != types.BackfillModeManual || c.FlexMatchMode != types.FlexMatchModeStandalone || !c.CreationTime.Equal(clock.Now()) ||
				aws.ToString(c.NotificationTarget) != "https://hooks.example.com/mm" {
				t.Errorf("created %+v", c)
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
			if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "k" {
				t.Errorf("tags %+v %v", tags, err)
			}
			_, err = gl.CreateMatchmakingConfiguration(ctx, in)
			wantAPIErr[*types.InvalidRequestException](t, "duplicate", err)
			bad := *in
			bad.Name, bad.GameSessionQueueArns = aws.String("bad"), []string{"arn:aws:gamelift:us-west-2:123456789012:gamesessionqueue/q"}
			_, err = gl.CreateMatchmakingConfiguration(ctx, &bad)
			wantAPIErr[*types.InvalidRequestException](t, "STANDALONE with a queue", err)
			bad = *in
			bad.Name, bad.FlexMatchMode = aws.String("bad"), types.FlexMatchModeWithQueue
			_, err = gl.CreateMatchmakingConfiguration(ctx, &bad)
			wantAPIErr[*types.InvalidRequestException](t, "WITH_QUEUE without a queue", err)
			bad = *in
			bad.Name, bad.RuleSetName = aws.String("bad"), aws.String("missing")
			_, err = gl.CreateMatchmakingConfiguration(ctx, &bad)
			wantAPIErr[*types.NotFoundException](t, "unknown rule set", err)
			bad = *in
			bad.Name, bad.AcceptanceRequired = aws.String("bad"), aws.Bool(true)
			_, err = gl.CreateMatchmakingConfiguration(ctx, &bad)
			wantAPIErr[*types.InvalidRequestException](t, "acceptance without timeout", err)

			for _, d := range []*gamelift.DescribeMatchmakingConfigurationsInput{{Names: []string{arn, "missing"}}, {RuleSetName: aws.String("duel")}, {}} {
				got, err := gl.DescribeMatchmakingConfigurations(ctx, d)
				if err != nil || len(got.Configurations) != 1 || aws.ToString(got.Configurations[0].Name) != "solo" {
					t.Errorf("describe %+v: %+v %v", d, got, err)
				}
			}
			up, err := gl.UpdateMatchmakingConfiguration(ctx, &gamelift.UpdateMatchmakingConfigurationInput{Name: aws.String(arn),
				RequestTimeoutSeconds: aws.Int32(30), Description: aws.String("d")})
			if err != nil || aws.ToInt32(up.Configuration.RequestTimeoutSeconds) != 30 || aws.ToString(up.Configuration.CustomEventData) != "x" {
				t.Errorf("update %+v %v", up, err)
			}
			_, err = gl.UpdateMatchmakingConfiguration(ctx, &gamelift.UpdateMatchmakingConfigurationInput{Name: aws.String("missing")})
			wantAPIErr[*types.NotFoundException](t, "update unknown", err)

			for i, p := range []string{"alice", "bob"} {
				st, err := gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{TicketId: aws.String(fmt.Sprint("tk-", i)), ConfigurationName: aws.String("solo"),
					Players: []types.Player{{PlayerId: aws.String(p), PlayerAttributes: map[string]types.AttributeValue{"skill": {N: aws.Float64(20)}}}}})
				if err != nil || st.MatchmakingTicket.Status != types.MatchmakingConfigurationStatusQueued || aws.ToString(st.MatchmakingTicket.ConfigurationArn) != arn {
					t.Fatalf("start %+v %v", st, err)
				}
			}
			_, err = gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{ConfigurationName: aws.String("solo"),
				Players: []types.Player{{PlayerId: aws.String("carol"), PlayerAttributes: map[string]types.AttributeValue{"skill": {S: aws.String("high")}}}}})
			wantAPIErr[*types.InvalidRequestException](t, "attribute of the wrong type", err)
			_, err = gl.AcceptMatch(ctx, &gamelift.AcceptMatchInput{TicketId: aws.String("tk-0"), PlayerIds: []string{"alice"}, AcceptanceType: types.AcceptanceTypeAccept})
			wantAPIErr[*types.InvalidRequestException](t, "accept while QUEUED", err)
			_, err = gl.DeleteMatchmakingRuleSet(ctx, &gamelift.DeleteMatchmakingRuleSetInput{Name: aws.String("duel")})
			wantAPIErr[*types.InvalidRequestException](t, "rule set in use", err)

			if err := env.Server.FlexMatch().StepMatchmaking(ctx); err != nil {
				t.Fatal(err)
			}
			d, err := gl.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: []string{"tk-0", "tk-1", "nope"}})
			if err != nil || len(d.TicketList) != 2 {
				t.Fatalf("describe tickets %+v %v", d, err)
			}
			for _, tk := range d.TicketList {
				if tk.Status != types.MatchmakingConfigurationStatusCompleted || tk.EndTime == nil || aws.ToString(tk.Players[0].Team) == "" || tk.GameSessionConnectionInfo != nil {
					t.Errorf("ticket %+v", tk)
				}
			}
			_, err = gl.StopMatchmaking(ctx, &gamelift.StopMatchmakingInput{TicketId: aws.String("tk-0")})
			wantAPIErr[*types.InvalidRequestException](t, "stop a completed ticket", err)
			_, err = gl.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")})
			wantAPIErr[*types.InvalidRequestException](t, "eleven ids", err)
			if _, err := gl.DeleteMatchmakingConfiguration(ctx, &gamelift.DeleteMatchmakingConfigurationInput{Name: aws.String("solo")}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DeleteMatchmakingConfiguration(ctx, &gamelift.DeleteMatchmakingConfigurationInput{Name: aws.String("solo")})
			wantAPIErr[*types.NotFoundException](t, "delete twice", err)
		})
	}
}

// TestMatchmakingJSON drives tickets as hand-signed AWS JSON 1.1.
func TestMatchmakingJSON(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			for _, call := range [][2]string{
				{"CreateMatchmakingRuleSet", fmt.Sprintf(`{"Name":"duel","RuleSetBody":%q}`, duelRules)},
				{"CreateMatchmakingConfiguration", `{"Name":"solo","RuleSetName":"duel","RequestTimeoutSeconds":60,"AcceptanceRequired":true,"AcceptanceTimeoutSeconds":20,"FlexMatchMode":"STANDALONE"}`},
			} {
				if r := env.CallJSON(t, call[0], call[1]); r.Status != 200 {
					t.Fatalf("%s: %d %s", call[0], r.Status, r.Body)
				}
			}
			r := env.CallJSON(t, "StartMatchmaking", `{"TicketId":"t1","ConfigurationName":"solo","Players":[{"PlayerId":"p1","PlayerAttributes":{"skill":{"N":12}},"LatencyInMs":{"us-west-2":30}}]}`)
			if r.Status != 200 {
				t.Fatalf("start: %d %s", r.Status, r.Body)
			}
			tk := r.JSON(t)["MatchmakingTicket"].(map[string]any)
			if _, ok := tk["StartTime"].(float64); !ok || tk["Status"] != "QUEUED" || tk["ConfigurationName"] != "solo" {
				t.Errorf("ticket %v", tk)
			}
			r = env.CallJSON(t, "StartMatchmaking", `{"ConfigurationName":"solo","Players":[]}`)
			if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" {
				t.Errorf("no players: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "StopMatchmaking", `{"TicketId":"t1"}`)
			if r.Status != 200 || strings.TrimSpace(string(r.Body)) != "{}" {
				t.Errorf("stop: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "StopMatchmaking", `{"TicketId":"nope"}`)
			if r.Status != 400 || r.ErrorType(t) != "NotFoundException" {
				t.Errorf("stop unknown: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "DescribeMatchmaking", `{"TicketIds":["t1"]}`)
			list := r.JSON(t)["TicketList"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["Status"] != "CANCELLED" || list[0].(map[string]any)["StatusReason"] != "CANCELLED" {
				t.Errorf("describe: %s", r.Body)
			}
			r = env.CallJSON(t, "AcceptMatch", `{"TicketId":"t1","PlayerIds":["p1"],"AcceptanceType":"MAYBE"}`)
			if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" {
				t.Errorf("bad acceptance type: %d %s", r.Status, r.Body)
			}
		})
	}
}
