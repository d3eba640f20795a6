package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
)

// fleetClock is a settable clock for the server. It starts at the real
// time (SigV4 allows 15 minutes of skew) and moves only when told.
type fleetClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fleetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fleetClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startFleetEnv starts a server on backend opts with a fleetClock and the
// custom locations named.
func startFleetEnv(t *testing.T, opts []apitest.Option, locations ...string) (*apitest.Env, *gamelift.Client, *fleetClock) {
	t.Helper()
	clock := &fleetClock{t: time.Now().Truncate(time.Millisecond)}
	opts = append(append([]apitest.Option(nil), opts...), func(c *server.Config) { c.Now = clock.Now })
	env := apitest.Start(t, opts...)
	gl := env.Client()
	for _, l := range locations {
		if _, err := gl.CreateLocation(context.Background(), &gamelift.CreateLocationInput{LocationName: aws.String(l)}); err != nil {
			t.Fatal(err)
		}
	}
	return env, gl, clock
}

// anywhereFleet is a valid CreateFleet input over the locations named.
func anywhereFleet(name string, locations ...string) *gamelift.CreateFleetInput {
	in := &gamelift.CreateFleetInput{Name: aws.String(name), ComputeType: types.ComputeTypeAnywhere}
	for _, l := range locations {
		in.Locations = append(in.Locations, types.LocationConfiguration{Location: aws.String(l)})
	}
	return in
}

func createAnywhereFleet(t *testing.T, gl *gamelift.Client, in *gamelift.CreateFleetInput) *types.FleetAttributes {
	t.Helper()
	out, err := gl.CreateFleet(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	return out.FleetAttributes
}

func fleetCount(t *testing.T, gl *gamelift.Client) int {
	t.Helper()
	out, err := gl.ListFleets(context.Background(), &gamelift.ListFleetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.FleetIds)
}

func wantAPIErr[E error](t *testing.T, what string, err error) E {
	t.Helper()
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("%s: got %v, want %T", what, err, e)
	}
	return e
}

func TestCreateFleet(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a", "custom-b")
			ctx := context.Background()
			in := anywhereFleet("game", "custom-a", "custom-b")
			in.Description = aws.String("the game")
			in.AnywhereConfiguration = &types.AnywhereConfiguration{Cost: aws.String("1.5")}
			in.Tags = []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}
			out, err := gl.CreateFleet(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			a := out.FleetAttributes
			id := aws.ToString(a.FleetId)
			checks := []struct{ what, got, want string }{
				{"FleetArn", aws.ToString(a.FleetArn), "arn:aws:gamelift:us-west-2:123456789012:fleet/" + id},
				{"FleetType", string(a.FleetType), "ON_DEMAND"},
				{"Status", string(a.Status), "ACTIVE"},
				{"ComputeType", string(a.ComputeType), "ANYWHERE"},
				{"Name", aws.ToString(a.Name), "game"},
				{"Description", aws.ToString(a.Description), "the game"},
				{"NewGameSessionProtectionPolicy", string(a.NewGameSessionProtectionPolicy), "NoProtection"},
				{"MetricGroups", fmt.Sprint(a.MetricGroups), "[default]"},
				{"Cost", aws.ToString(a.AnywhereConfiguration.Cost), "1.5"},
				{"LocationStates", fmt.Sprint(len(out.LocationStates)), "2"},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			if !strings.HasPrefix(id, "fleet-") || len(id) != len("fleet-")+36 {
				t.Errorf("FleetId = %q, want fleet-<uuid>", id)
			}
			if a.CreationTime == nil || !a.CreationTime.Equal(clock.Now()) || a.ResourceCreationLimitPolicy == nil {
				t.Errorf("CreationTime %v (want %v), ResourceCreationLimitPolicy %v", a.CreationTime, clock.Now(), a.ResourceCreationLimitPolicy)
			}
			for _, ls := range out.LocationStates {
				if ls.Status != types.FleetStatusActive {
					t.Errorf("location %s is %s, want ACTIVE", aws.ToString(ls.Location), ls.Status)
				}
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: a.FleetArn})
			if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Value) != "core" {
				t.Errorf("fleet tags = %v, %v", tags, err)
			}
			if _, err := gl.TagResource(ctx, &gamelift.TagResourceInput{ResourceARN: a.FleetArn,
				Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}); err != nil {
				t.Errorf("TagResource on a fleet: %v", err)
			}
		})
	}
}

func TestCreateFleetRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			ec2 := anywhereFleet("x", "custom-a")
			ec2.ComputeType = types.ComputeTypeEc2
			noType := anywhereFleet("x", "custom-a")
			noType.ComputeType = ""
			tooMany := anywhereFleet("x", "custom-a")
			tooMany.RuntimeConfiguration = &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
				{LaunchPath: aws.String("/srv/a"), ConcurrentExecutions: aws.Int32(30)},
				{LaunchPath: aws.String("/srv/b"), ConcurrentExecutions: aws.Int32(21)},
			}}
			noProcs := anywhereFleet("x", "custom-a")
			noProcs.RuntimeConfiguration = &types.RuntimeConfiguration{}
			for what, c := range map[string]struct {
				in   *gamelift.CreateFleetInput
				word string
			}{
				"EC2":              {ec2, "ANYWHERE"},
				"no compute type":  {noType, "ANYWHERE"},
				"no locations":     {anywhereFleet("x"), "Locations"},
				"51 processes":     {tooMany, "ConcurrentExecutions"},
				"no processes":     {noProcs, "ServerProcesses"},
				"region, not ours": {anywhereFleet("x", "us-west-2"), ""},
			} {
				_, err := gl.CreateFleet(ctx, c.in)
				if what == "region, not ours" {
					wantAPIErr[*types.NotFoundException](t, what, err)
					continue
				}
				e := wantAPIErr[*types.InvalidRequestException](t, what, err)
				if !strings.Contains(e.ErrorMessage(), c.word) {
					t.Errorf("%s: message %q does not name %s", what, e.ErrorMessage(), c.word)
				}
			}
			_, err := gl.CreateFleet(ctx, anywhereFleet("x", "custom-a", "custom-nowhere"))
			if e := wantAPIErr[*types.NotFoundException](t, "unknown location", err); !strings.Contains(e.ErrorMessage(), "custom-nowhere") {
				t.Errorf("message %q does not name the location", e.ErrorMessage())
			}
			if n := fleetCount(t, gl); n != 0 {
				t.Errorf("%d fleets after refused requests, want 0", n)
			}
		})
	}
}

func TestDescribeAndListFleets(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			var ids []string
			for i := 0; i < 3; i++ {
				ids = append(ids, aws.ToString(createAnywhereFleet(t, gl, anywhereFleet(fmt.Sprint("f", i), "custom-a")).FleetId))
				clock.Advance(time.Millisecond)
			}
			arn := "arn:aws:gamelift:us-west-2:123456789012:fleet/" + ids[1]
			out, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{
				FleetIds: []string{arn, "fleet-00000000-0000-0000-0000-000000000000", ids[0]}, Limit: aws.Int32(1)})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.FleetAttributes) != 2 || aws.ToString(out.FleetAttributes[0].FleetId) != ids[1] || out.NextToken != nil {
				t.Errorf("by ids: %d fleets, next %v; want the 2 that exist, in order, Limit ignored", len(out.FleetAttributes), out.NextToken)
			}
			var described []string
			p := gamelift.NewDescribeFleetAttributesPaginator(gl, &gamelift.DescribeFleetAttributesInput{Limit: aws.Int32(2)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range page.FleetAttributes {
					described = append(described, aws.ToString(a.FleetId))
				}
			}
			var listed []string
			lp := gamelift.NewListFleetsPaginator(gl, &gamelift.ListFleetsInput{Limit: aws.Int32(2)})
			for pages := 1; lp.HasMorePages(); pages++ {
				page, err := lp.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, page.FleetIds...)
				if pages > 2 {
					t.Fatal("more than 2 pages for 3 fleets at Limit 2")
				}
			}
			if fmt.Sprint(described) != fmt.Sprint(ids) || fmt.Sprint(listed) != fmt.Sprint(ids) {
				t.Errorf("described %v, listed %v; want %v in creation order", described, listed, ids)
			}
			for _, f := range []*gamelift.ListFleetsInput{{BuildId: aws.String("build-1")}, {ScriptId: aws.String("script-1")}} {
				out, err := gl.ListFleets(ctx, f)
				if err != nil || len(out.FleetIds) != 0 {
					t.Errorf("ListFleets by build or script: %v %v, want none", out, err)
				}
			}
			_, err = gl.ListFleets(ctx, &gamelift.ListFleetsInput{NextToken: aws.String("garbage")})
			wantAPIErr[*types.InvalidRequestException](t, "foreign NextToken", err)
		})
	}
}

func TestUpdateAndDeleteFleet(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a", "custom-b")
			ctx := context.Background()
			id := createAnywhereFleet(t, gl, anywhereFleet("old", "custom-a")).FleetId
			other := createAnywhereFleet(t, gl, anywhereFleet("other", "custom-b")).FleetId
			clock.Advance(time.Second)
			up, err := gl.UpdateFleetAttributes(ctx, &gamelift.UpdateFleetAttributesInput{
				FleetId: id, Name: aws.String("new"), NewGameSessionProtectionPolicy: types.ProtectionPolicyFullProtection,
				MetricGroups:                []string{"mine"},
				ResourceCreationLimitPolicy: &types.ResourceCreationLimitPolicy{NewGameSessionsPerCreator: aws.Int32(3), PolicyPeriodInMinutes: aws.Int32(15)},
				AnywhereConfiguration:       &types.AnywhereConfiguration{Cost: aws.String("2")},
			})
			if err != nil || aws.ToString(up.FleetId) != aws.ToString(id) || !strings.HasSuffix(aws.ToString(up.FleetArn), aws.ToString(id)) {
				t.Fatalf("UpdateFleetAttributes = %+v, %v", up, err)
			}
			d, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{aws.ToString(id)}})
			if err != nil {
				t.Fatal(err)
			}
			a := d.FleetAttributes[0]
			if aws.ToString(a.Name) != "new" || a.NewGameSessionProtectionPolicy != types.ProtectionPolicyFullProtection ||
				fmt.Sprint(a.MetricGroups) != "[mine]" || aws.ToInt32(a.ResourceCreationLimitPolicy.NewGameSessionsPerCreator) != 3 ||
				aws.ToString(a.AnywhereConfiguration.Cost) != "2" {
				t.Errorf("after update: %+v", a)
			}
			_, err = gl.DeleteLocation(ctx, &gamelift.DeleteLocationInput{LocationName: aws.String("custom-a")})
			if e := wantAPIErr[*types.InvalidRequestException](t, "DeleteLocation in use", err); !strings.Contains(e.ErrorMessage(), aws.ToString(id)) {
				t.Errorf("message %q does not name the fleet", e.ErrorMessage())
			}
			if _, err := gl.DeleteFleet(ctx, &gamelift.DeleteFleetInput{FleetId: id}); err != nil {
				t.Fatal(err)
			}
			for what, call := range map[string]func() error{
				"DeleteFleet again": func() error { _, err := gl.DeleteFleet(ctx, &gamelift.DeleteFleetInput{FleetId: id}); return err },
				"UpdateFleetAttributes": func() error {
					_, err := gl.UpdateFleetAttributes(ctx, &gamelift.UpdateFleetAttributesInput{FleetId: id})
					return err
				},
				"DescribeFleetEvents": func() error {
					_, err := gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: id})
					return err
				},
				"DescribeRuntimeConfiguration": func() error {
					_, err := gl.DescribeRuntimeConfiguration(ctx, &gamelift.DescribeRuntimeConfigurationInput{FleetId: id})
					return err
				},
				"DescribeFleetLocationAttributes": func() error {
					_, err := gl.DescribeFleetLocationAttributes(ctx, &gamelift.DescribeFleetLocationAttributesInput{FleetId: id})
					return err
				},
			} {
				wantAPIErr[*types.NotFoundException](t, what+" on a deleted fleet", call())
			}
			if n := fleetCount(t, gl); n != 1 {
				t.Errorf("%d fleets after delete, want 1 (%s)", n, aws.ToString(other))
			}
			if _, err := gl.DeleteLocation(ctx, &gamelift.DeleteLocationInput{LocationName: aws.String("custom-a")}); err != nil {
				t.Errorf("DeleteLocation once its fleet is gone: %v", err)
			}
		})
	}
}
