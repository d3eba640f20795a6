package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

// duelRules is a 1v1 rule set with a skill distance rule, written with a
// comment and odd spacing so byte-for-byte storage shows.
const duelRules = `{
  "name": "duel",  // comment kept in the stored body
  "ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "skill", "type": "number", "default": 10}],
  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 1}, {"name": "blue", "minPlayers": 1, "maxPlayers": 1}],
  "rules": [{"name": "CloseSkill", "type": "distance",
    "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
    "referenceValue": "min(flatten(teams[*].players.attributes[skill]))", "maxDistance": 10}]
}`

func TestMatchmakingRuleSetLifecycle(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			v, err := gl.ValidateMatchmakingRuleSet(ctx, &gamelift.ValidateMatchmakingRuleSetInput{RuleSetBody: aws.String(duelRules)})
			if err != nil || !aws.ToBool(v.Valid) {
				t.Fatalf("Validate = %+v %v", v, err)
			}
			out, err := gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{
				Name: aws.String("duel.v1"), RuleSetBody: aws.String(duelRules),
				Tags: []types.Tag{{Key: aws.String("mode"), Value: aws.String("ranked")}}})
			if err != nil {
				t.Fatal(err)
			}
			rs := out.RuleSet
			arn := "arn:aws:gamelift:us-west-2:123456789012:matchmakingruleset/duel.v1"
			if aws.ToString(rs.RuleSetName) != "duel.v1" || aws.ToString(rs.RuleSetArn) != arn ||
				aws.ToString(rs.RuleSetBody) != duelRules || !rs.CreationTime.Equal(clock.Now()) {
				t.Errorf("created %+v", rs)
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
			if err != nil || len(tags.Tags) != 1 {
				t.Errorf("tags %+v %v", tags, err)
			}
			_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("duel.v1"), RuleSetBody: aws.String(duelRules)})
			wantAPIErr[*types.InvalidRequestException](t, "duplicate name", err)
			for _, ref := range []string{"duel.v1", arn} {
				d, err := gl.DescribeMatchmakingRuleSets(ctx, &gamelift.DescribeMatchmakingRuleSetsInput{Names: []string{ref, "missing"}})
				if err != nil || len(d.RuleSets) != 1 || aws.ToString(d.RuleSets[0].RuleSetBody) != duelRules {
					t.Errorf("Describe(%s) = %+v %v", ref, d, err)
				}
			}
			_, err = gl.DescribeMatchmakingRuleSets(ctx, &gamelift.DescribeMatchmakingRuleSetsInput{Names: []string{"missing"}})
			wantAPIErr[*types.NotFoundException](t, "describe only unknown names", err)
			if _, err := gl.DeleteMatchmakingRuleSet(ctx, &gamelift.DeleteMatchmakingRuleSetInput{Name: aws.String(arn)}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DeleteMatchmakingRuleSet(ctx, &gamelift.DeleteMatchmakingRuleSetInput{Name: aws.String("duel.v1")})
			wantAPIErr[*types.NotFoundException](t, "second delete", err)
			_, err = gl.DescribeMatchmakingRuleSets(ctx, &gamelift.DescribeMatchmakingRuleSetsInput{Names: []string{"duel.v1"}})
			wantAPIErr[*types.NotFoundException](t, "describe deleted", err)
		})
	}
}

func TestMatchmakingRuleSetPaging(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			for i := range 3 {
				clock.Advance(1000)
				if _, err := gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{
					Name: aws.String(fmt.Sprintf("rs-%d", i)), RuleSetBody: aws.String(duelRules)}); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			p := gamelift.NewDescribeMatchmakingRuleSetsPaginator(gl, &gamelift.DescribeMatchmakingRuleSetsInput{Limit: aws.Int32(2)})
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, rs := range page.RuleSets {
					names = append(names, aws.ToString(rs.RuleSetName))
				}
			}
			if pages != 2 || strings.Join(names, ",") != "rs-0,rs-1,rs-2" {
				t.Errorf("%d pages: %v", pages, names)
			}
			_, err := gl.DescribeMatchmakingRuleSets(ctx, &gamelift.DescribeMatchmakingRuleSetsInput{Limit: aws.Int32(11)})
			wantAPIErr[*types.InvalidRequestException](t, "Limit 11", err)
		})
	}
}

func TestMatchmakingRuleSetRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			bad := strings.Replace(duelRules, `"maxDistance": 10`, `"minDistance": null`, 1)
			for what, body := range map[string]string{
				"no maxDistance": bad, "not JSON": `{"ruleLanguageVersion"`, "no teams": `{"ruleLanguageVersion": "1.0"}`,
				"too large": `{"ruleLanguageVersion": "1.0", "algorithm": {"strategy": "balanced", "balancedAttribute": "s"},
					"playerAttributes": [{"name": "s", "type": "number"}], "teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 201}]}`,
			} {
				_, err := gl.ValidateMatchmakingRuleSet(ctx, &gamelift.ValidateMatchmakingRuleSetInput{RuleSetBody: aws.String(body)})
				e := wantAPIErr[*types.InvalidRequestException](t, "Validate "+what, err)
				_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("x"), RuleSetBody: aws.String(body)})
				wantAPIErr[*types.InvalidRequestException](t, "Create "+what, err)
				if what == "no maxDistance" && !strings.Contains(e.ErrorMessage(), `rule "CloseSkill"`) {
					t.Errorf("message %q does not name the rule", e.ErrorMessage())
				}
			}
			v, err := gl.ValidateMatchmakingRuleSet(ctx, &gamelift.ValidateMatchmakingRuleSetInput{RuleSetBody: aws.String(`[1, 2]`)})
			if err != nil || aws.ToBool(v.Valid) {
				t.Errorf("JSON that is not an object: %+v %v, want Valid false", v, err)
			}
			_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("bad name!"), RuleSetBody: aws.String(duelRules)})
			wantAPIErr[*types.InvalidRequestException](t, "name pattern", err)
			_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String(""), RuleSetBody: aws.String(duelRules)})
			wantAPIErr[*types.InvalidRequestException](t, "empty name", err)
			d, err := gl.DescribeMatchmakingRuleSets(ctx, &gamelift.DescribeMatchmakingRuleSetsInput{})
			if err != nil || len(d.RuleSets) != 0 {
				t.Errorf("after refusals: %+v %v", d, err)
			}
		})
	}
}

// TestMatchmakingRuleSetJSON drives the operations as hand-signed AWS JSON
// 1.1, as botocore sends them, and checks the wire shapes and error types.
func TestMatchmakingRuleSetJSON(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			b, err := os.ReadFile("../matchmaking/ruleset/testdata/valid/ex11_block_list.json")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"Name": "blocklist", "RuleSetBody": string(b)})
			r := env.CallJSON(t, "CreateMatchmakingRuleSet", string(body))
			if r.Status != 200 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			rs := r.JSON(t)["RuleSet"].(map[string]any)
			if rs["RuleSetBody"] != string(b) || rs["RuleSetName"] != "blocklist" {
				t.Errorf("RuleSet %v", rs)
			}
			if _, ok := rs["CreationTime"].(float64); !ok {
				t.Errorf("CreationTime %T, want epoch seconds", rs["CreationTime"])
			}
			r = env.CallJSON(t, "ValidateMatchmakingRuleSet", `{"RuleSetBody": "{\"ruleLanguageVersion\": \"1.0\", \"teams\": [{\"name\": \"a\", \"minPlayers\": 1, \"maxPlayers\": 1}], \"rules\": [{\"name\": \"R\", \"type\": \"latency\"}]}"}`)
			if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" || !strings.Contains(string(r.Body), `rule \"R\"`) {
				t.Errorf("invalid latency rule: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "DescribeMatchmakingRuleSets", `{"Names": []}`)
			if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" {
				t.Errorf("empty Names: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "DeleteMatchmakingRuleSet", `{"Name": "blocklist"}`)
			if r.Status != 200 || strings.TrimSpace(string(r.Body)) != "{}" {
				t.Errorf("delete: %d %s", r.Status, r.Body)
			}
		})
	}
}
