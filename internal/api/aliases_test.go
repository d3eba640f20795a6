package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

func simpleAlias(name string, fleetID *string) *gamelift.CreateAliasInput {
	return &gamelift.CreateAliasInput{Name: aws.String(name),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: fleetID}}
}

func terminalAlias(name, message string) *gamelift.CreateAliasInput {
	return &gamelift.CreateAliasInput{Name: aws.String(name),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String(message)}}
}

func aliasCount(t *testing.T, gl *gamelift.Client) int {
	t.Helper()
	out, err := gl.ListAliases(context.Background(), &gamelift.ListAliasesInput{})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Aliases)
}

func TestCreateAndResolveAlias(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a"))
			in := simpleAlias("live", f.FleetId)
			in.Description = aws.String("players land here")
			in.Tags = []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}
			out, err := gl.CreateAlias(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			a := out.Alias
			id := aws.ToString(a.AliasId)
			if !strings.HasPrefix(id, "alias-") || len(id) != len("alias-")+36 ||
				aws.ToString(a.AliasArn) != "arn:aws:gamelift:us-west-2:123456789012:alias/"+id ||
				aws.ToString(a.Description) != "players land here" || !a.CreationTime.Equal(clock.Now()) || !a.LastUpdatedTime.Equal(clock.Now()) ||
				aws.ToString(a.RoutingStrategy.FleetId) != aws.ToString(f.FleetId) {
				t.Errorf("created alias %+v", a)
			}
			for _, ref := range []*string{a.AliasId, a.AliasArn} {
				r, err := gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: ref})
				if err != nil || aws.ToString(r.FleetId) != aws.ToString(f.FleetId) || aws.ToString(r.FleetArn) != aws.ToString(f.FleetArn) {
					t.Errorf("ResolveAlias(%s) = %+v %v", aws.ToString(ref), r, err)
				}
				d, err := gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: ref})
				if err != nil || aws.ToString(d.Alias.Name) != "live" {
					t.Errorf("DescribeAlias(%s) = %+v %v", aws.ToString(ref), d, err)
				}
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: a.AliasArn})
			if err != nil || len(tags.Tags) != 1 {
				t.Errorf("alias tags %v %v", tags, err)
			}
			term := terminalAlias("closed", "Season over, see you soon")
			term.RoutingStrategy.FleetId = f.FleetId
			to, err := gl.CreateAlias(ctx, term)
			if err != nil || to.Alias.RoutingStrategy.FleetId != nil {
				t.Fatalf("TERMINAL alias with a FleetId: %+v %v, want FleetId dropped", to, err)
			}
			_, err = gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: to.Alias.AliasId})
			if e := wantAPIErr[*types.TerminalRoutingStrategyException](t, "ResolveAlias TERMINAL", err); e.ErrorMessage() != "Season over, see you soon" {
				t.Errorf("message %q, want the alias's message", e.ErrorMessage())
			}
		})
	}
}

func TestAliasRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			_, err := gl.CreateAlias(ctx, simpleAlias("x", nil))
			if e := wantAPIErr[*types.InvalidRequestException](t, "SIMPLE without FleetId", err); !strings.Contains(e.ErrorMessage(), "FleetId") {
				t.Errorf("message %q does not name FleetId", e.ErrorMessage())
			}
			// The model lists no NotFoundException for CreateAlias: the answer
			// is the modeled InvalidRequestException, naming the fleet.
			_, err = gl.CreateAlias(ctx, simpleAlias("x", aws.String("fleet-nope")))
			if e := wantAPIErr[*types.InvalidRequestException](t, "SIMPLE to an unknown fleet", err); !strings.Contains(e.ErrorMessage(), "fleet-nope") {
				t.Errorf("SIMPLE to an unknown fleet: message %q does not name the fleet", e.ErrorMessage())
			}
			_, err = gl.CreateAlias(ctx, simpleAlias("  ", nil))
			wantAPIErr[*types.InvalidRequestException](t, "blank name", err)
			if n := aliasCount(t, gl); n != 0 {
				t.Errorf("%d aliases after refused requests", n)
			}
			for what, call := range map[string]func() error{
				"DescribeAlias": func() error {
					_, err := gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: aws.String("alias-nope")})
					return err
				},
				"ResolveAlias": func() error {
					_, err := gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: aws.String("alias-nope")})
					return err
				},
				"UpdateAlias": func() error {
					_, err := gl.UpdateAlias(ctx, &gamelift.UpdateAliasInput{AliasId: aws.String("alias-nope"), Name: aws.String("n")})
					return err
				},
				"DeleteAlias": func() error {
					_, err := gl.DeleteAlias(ctx, &gamelift.DeleteAliasInput{AliasId: aws.String("alias-nope")})
					return err
				},
			} {
				wantAPIErr[*types.NotFoundException](t, what+" of an unknown alias", call())
			}
		})
	}
}

func TestUpdateListDeleteAliases(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a"))
			var ids []*string
			for i, in := range []*gamelift.CreateAliasInput{simpleAlias("a", f.FleetId), terminalAlias("a", "m"), simpleAlias("b", f.FleetId)} {
				out, err := gl.CreateAlias(ctx, in)
				if err != nil {
					t.Fatal(i, err)
				}
				ids = append(ids, out.Alias.AliasId)
				clock.Advance(time.Millisecond)
			}
			var listed []string
			p := gamelift.NewListAliasesPaginator(gl, &gamelift.ListAliasesInput{Limit: aws.Int32(2)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range page.Aliases {
					listed = append(listed, aws.ToString(a.AliasId))
				}
			}
			if len(listed) != 3 {
				t.Errorf("listed %v, want 3 aliases", listed)
			}
			for _, c := range []struct {
				in   gamelift.ListAliasesInput
				want int
			}{{gamelift.ListAliasesInput{Name: aws.String("a")}, 2}, {gamelift.ListAliasesInput{RoutingStrategyType: types.RoutingStrategyTypeSimple}, 2},
				{gamelift.ListAliasesInput{Name: aws.String("a"), RoutingStrategyType: types.RoutingStrategyTypeTerminal}, 1}} {
				out, err := gl.ListAliases(ctx, &c.in)
				if err != nil || len(out.Aliases) != c.want {
					t.Errorf("ListAliases(%+v) = %v %v, want %d", c.in, out, err, c.want)
				}
			}
			clock.Advance(time.Second)
			up, err := gl.UpdateAlias(ctx, &gamelift.UpdateAliasInput{AliasId: ids[0], Name: aws.String("renamed"),
				RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("closed")}})
			if err != nil || aws.ToString(up.Alias.Name) != "renamed" || up.Alias.RoutingStrategy.Type != types.RoutingStrategyTypeTerminal ||
				up.Alias.RoutingStrategy.FleetId != nil || !up.Alias.LastUpdatedTime.Equal(clock.Now()) || up.Alias.CreationTime.Equal(clock.Now()) {
				t.Fatalf("UpdateAlias = %+v %v", up, err)
			}
			_, err = gl.UpdateAlias(ctx, &gamelift.UpdateAliasInput{AliasId: ids[0],
				RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String("fleet-nope")}})
			wantAPIErr[*types.NotFoundException](t, "retarget to an unknown fleet", err)
			d, err := gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: ids[0]})
			if err != nil || d.Alias.RoutingStrategy.Type != types.RoutingStrategyTypeTerminal {
				t.Errorf("after a refused update: %+v %v, want TERMINAL unchanged", d, err)
			}
			if _, err := gl.DeleteAlias(ctx, &gamelift.DeleteAliasInput{AliasId: ids[1]}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: ids[1]})
			wantAPIErr[*types.NotFoundException](t, "ResolveAlias after delete", err)
			if n := aliasCount(t, gl); n != 2 {
				t.Errorf("%d aliases after delete, want 2", n)
			}
		})
	}
}

// TestFleetAndAliasOpsWithJSON drives every operation of the area over AWS
// JSON 1.1, as boto3 and the CLI do.
func TestFleetAndAliasOpsWithJSON(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env, _, _ := startFleetEnv(t, opts, "custom-j")
			call := func(op, body string) map[string]any {
				t.Helper()
				r := env.CallJSON(t, op, body)
				if r.Status != http.StatusOK {
					t.Fatalf("%s: %d %s", op, r.Status, r.Body)
				}
				return r.JSON(t)
			}
			for op, key := range map[string]string{"ListFleets": "FleetIds", "DescribeFleetAttributes": "FleetAttributes", "ListAliases": "Aliases"} {
				if l, ok := call(op, `{}`)[key].([]any); !ok || len(l) != 0 {
					t.Errorf("%s on nothing: %s must be an empty list", op, key)
				}
			}
			fa := call("CreateFleet", `{"Name":"j","ComputeType":"ANYWHERE","Locations":[{"Location":"custom-j"}],
				"RuntimeConfiguration":{"ServerProcesses":[{"LaunchPath":"/srv/g","ConcurrentExecutions":2}]}}`)["FleetAttributes"].(map[string]any)
			id, _ := fa["FleetId"].(string)
			if _, ok := fa["CreationTime"].(float64); !ok || fa["Status"] != "ACTIVE" {
				t.Errorf("FleetAttributes %v: CreationTime must be a number, Status ACTIVE", fa)
			}
			fleet := fmt.Sprintf(`{"FleetId":%q}`, id)
			call("UpdateFleetAttributes", fmt.Sprintf(`{"FleetId":%q,"Description":"d"}`, id))
			if l := call("DescribeFleetAttributes", fmt.Sprintf(`{"FleetIds":[%q]}`, id))["FleetAttributes"].([]any); len(l) != 1 {
				t.Errorf("DescribeFleetAttributes by id: %v", l)
			}
			if l := call("DescribeFleetEvents", fleet)["Events"].([]any); len(l) != 2 {
				t.Errorf("DescribeFleetEvents: %v", l)
			}
			call("DescribeFleetLocationAttributes", fleet)
			call("UpdateRuntimeConfiguration", fmt.Sprintf(`{"FleetId":%q,"RuntimeConfiguration":{"ServerProcesses":[{"LaunchPath":"/srv/h","ConcurrentExecutions":1}]}}`, id))
			rc := call("DescribeRuntimeConfiguration", fleet)["RuntimeConfiguration"].(map[string]any)
			if sp := rc["ServerProcesses"].([]any); len(sp) != 1 || sp[0].(map[string]any)["LaunchPath"] != "/srv/h" {
				t.Errorf("runtime configuration %v", rc)
			}
			alias := call("CreateAlias", fmt.Sprintf(`{"Name":"j","RoutingStrategy":{"Type":"SIMPLE","FleetId":%q}}`, id))["Alias"].(map[string]any)
			aid := fmt.Sprintf(`{"AliasId":%q}`, alias["AliasId"])
			call("DescribeAlias", aid)
			call("UpdateAlias", fmt.Sprintf(`{"AliasId":%q,"Description":"x"}`, alias["AliasId"]))
			if r := call("ResolveAlias", aid); r["FleetId"] != id {
				t.Errorf("ResolveAlias = %v", r)
			}
			call("DeleteAlias", aid)
			call("DeleteFleet", fleet)
			for _, c := range []struct{ op, body, want string }{
				{"CreateFleet", `{"Name":"j","ComputeType":"CONTAINER","Locations":[{"Location":"custom-j"}]}`, "InvalidRequestException"},
				{"CreateFleet", `{"ComputeType":"ANYWHERE","Locations":[{"Location":"custom-j"}]}`, "InvalidRequestException"},
				{"DescribeFleetEvents", fleet, "NotFoundException"},
				{"ResolveAlias", aid, "NotFoundException"},
				{"CreateAlias", `{"Name":"t","RoutingStrategy":{"Type":"TERMINAL","Message":"bye"}}`, ""},
			} {
				r := env.CallJSON(t, c.op, c.body)
				if c.want == "" {
					continue
				}
				if r.Status != http.StatusBadRequest || r.ErrorType(t) != c.want {
					t.Errorf("%s %s: %d %s, want %s", c.op, c.body, r.Status, r.Body, c.want)
				}
			}
			l := call("ListAliases", `{"RoutingStrategyType":"TERMINAL"}`)["Aliases"].([]any)
			r := env.CallJSON(t, "ResolveAlias", fmt.Sprintf(`{"AliasId":%q}`, l[0].(map[string]any)["AliasId"]))
			if r.ErrorType(t) != "TerminalRoutingStrategyException" || r.JSON(t)["message"] != "bye" {
				t.Errorf("ResolveAlias TERMINAL: %s", r.Body)
			}
		})
	}
}
