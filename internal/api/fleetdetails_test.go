package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

func TestDescribeFleetEvents(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			created := clock.Now()
			id := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a")).FleetId
			createAnywhereFleet(t, gl, anywhereFleet("other", "custom-a"))
			clock.Advance(time.Minute)
			updated := clock.Now()
			for _, p := range []types.ProtectionPolicy{types.ProtectionPolicyFullProtection, types.ProtectionPolicyFullProtection} {
				if _, err := gl.UpdateFleetAttributes(ctx, &gamelift.UpdateFleetAttributesInput{FleetId: id, NewGameSessionProtectionPolicy: p}); err != nil {
					t.Fatal(err)
				}
			}
			var codes []string
			p := gamelift.NewDescribeFleetEventsPaginator(gl, &gamelift.DescribeFleetEventsInput{FleetId: id, Limit: aws.Int32(1)})
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, e := range page.Events {
					codes = append(codes, string(e.EventCode))
					if aws.ToString(e.ResourceId) != aws.ToString(id) || aws.ToString(e.EventId) == "" || aws.ToString(e.Message) == "" || e.EventTime == nil {
						t.Errorf("event %+v lacks a member", e)
					}
				}
			}
			want := "[FLEET_CREATED FLEET_STATE_ACTIVE FLEET_NEW_GAME_SESSION_PROTECTION_POLICY_UPDATED]"
			if fmt.Sprint(codes) != want || pages != 3 {
				t.Errorf("events %v in %d pages, want %s in 3 (an unchanged policy records nothing)", codes, pages, want)
			}
			for _, c := range []struct {
				start, end *time.Time
				want       int
			}{
				{aws.Time(updated), nil, 1},
				{nil, aws.Time(created), 2},
				{aws.Time(created), aws.Time(updated), 3},
				{aws.Time(updated.Add(time.Second)), nil, 0},
			} {
				out, err := gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: id, StartTime: c.start, EndTime: c.end})
				if err != nil || len(out.Events) != c.want {
					t.Errorf("events in [%v, %v]: %v %v, want %d", c.start, c.end, out, err, c.want)
				}
			}
			_, err := gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: id, StartTime: aws.Time(updated), EndTime: aws.Time(created)})
			wantAPIErr[*types.InvalidRequestException](t, "EndTime before StartTime", err)
			_, err = gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String("fleet-nope")})
			wantAPIErr[*types.NotFoundException](t, "events of an unknown fleet", err)
		})
	}
}

func TestDescribeFleetLocationAttributes(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a", "custom-b", "custom-c")
			ctx := context.Background()
			f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-c", "custom-a", "custom-c"))
			var got []string
			p := gamelift.NewDescribeFleetLocationAttributesPaginator(gl, &gamelift.DescribeFleetLocationAttributesInput{FleetId: f.FleetArn, Limit: aws.Int32(1)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if aws.ToString(page.FleetId) != aws.ToString(f.FleetId) || aws.ToString(page.FleetArn) != aws.ToString(f.FleetArn) {
					t.Errorf("page names fleet %v %v", page.FleetId, page.FleetArn)
				}
				for _, la := range page.LocationAttributes {
					got = append(got, aws.ToString(la.LocationState.Location)+":"+string(la.LocationState.Status))
				}
			}
			if fmt.Sprint(got) != "[custom-c:ACTIVE custom-a:ACTIVE]" {
				t.Errorf("locations %v, want custom-c then custom-a, ACTIVE, once each", got)
			}
			out, err := gl.DescribeFleetLocationAttributes(ctx, &gamelift.DescribeFleetLocationAttributesInput{FleetId: f.FleetId, Locations: []string{"custom-a", "custom-b"}})
			if err != nil || len(out.LocationAttributes) != 1 || aws.ToString(out.LocationAttributes[0].LocationState.Location) != "custom-a" {
				t.Errorf("filtered: %+v %v, want custom-a only", out, err)
			}
			_, err = gl.DescribeFleetLocationAttributes(ctx, &gamelift.DescribeFleetLocationAttributesInput{FleetId: f.FleetId, NextToken: aws.String("bad")})
			wantAPIErr[*types.InvalidRequestException](t, "foreign NextToken", err)
		})
	}
}

func TestRuntimeConfiguration(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			in := anywhereFleet("f", "custom-a")
			in.RuntimeConfiguration = &types.RuntimeConfiguration{
				ServerProcesses:                     []types.ServerProcess{{LaunchPath: aws.String("/srv/game"), Parameters: aws.String("-port 7777"), ConcurrentExecutions: aws.Int32(4)}},
				GameSessionActivationTimeoutSeconds: aws.Int32(120),
			}
			id := createAnywhereFleet(t, gl, in).FleetId
			d, err := gl.DescribeRuntimeConfiguration(ctx, &gamelift.DescribeRuntimeConfigurationInput{FleetId: id})
			if err != nil {
				t.Fatal(err)
			}
			rc := d.RuntimeConfiguration
			if len(rc.ServerProcesses) != 1 || aws.ToString(rc.ServerProcesses[0].Parameters) != "-port 7777" ||
				aws.ToInt32(rc.ServerProcesses[0].ConcurrentExecutions) != 4 || aws.ToInt32(rc.GameSessionActivationTimeoutSeconds) != 120 {
				t.Errorf("runtime configuration as created: %+v", rc)
			}
			up, err := gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: id, RuntimeConfiguration: &types.RuntimeConfiguration{
				ServerProcesses: []types.ServerProcess{
					{LaunchPath: aws.String("/srv/a"), ConcurrentExecutions: aws.Int32(25)},
					{LaunchPath: aws.String("/srv/b"), ConcurrentExecutions: aws.Int32(25)},
				},
			}})
			if err != nil || len(up.RuntimeConfiguration.ServerProcesses) != 2 {
				t.Fatalf("UpdateRuntimeConfiguration = %+v %v", up, err)
			}
			for what, rc := range map[string]*types.RuntimeConfiguration{
				"51 processes": {ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/srv/a"), ConcurrentExecutions: aws.Int32(51)}}},
				"no processes": {MaxConcurrentGameSessionActivations: aws.Int32(2)},
			} {
				_, err := gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: id, RuntimeConfiguration: rc})
				wantAPIErr[*types.InvalidRequestException](t, what, err)
			}
			d, err = gl.DescribeRuntimeConfiguration(ctx, &gamelift.DescribeRuntimeConfigurationInput{FleetId: id})
			if err != nil || len(d.RuntimeConfiguration.ServerProcesses) != 2 || d.RuntimeConfiguration.GameSessionActivationTimeoutSeconds != nil {
				t.Errorf("after refused updates: %+v %v, want the replaced configuration unchanged", d.RuntimeConfiguration, err)
			}
			_, err = gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String("fleet-nope"), RuntimeConfiguration: up.RuntimeConfiguration})
			wantAPIErr[*types.NotFoundException](t, "unknown fleet", err)
		})
	}
}

// TestDeleteLocationRacesCreateFleet pins that a location is never deleted
// under a fleet, however CreateFleet and DeleteLocation interleave.
func TestDeleteLocationRacesCreateFleet(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			for i := 0; i < 10; i++ {
				loc := fmt.Sprintf("custom-race%d", i)
				if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(loc)}); err != nil {
					t.Fatal(err)
				}
				var createErr, deleteErr error
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); _, createErr = gl.CreateFleet(ctx, anywhereFleet("r", loc)) }()
				go func() {
					defer wg.Done()
					_, deleteErr = gl.DeleteLocation(ctx, &gamelift.DeleteLocationInput{LocationName: aws.String(loc)})
				}()
				wg.Wait()
				if (createErr == nil) == (deleteErr == nil) {
					t.Fatalf("round %d: CreateFleet %v, DeleteLocation %v: exactly one must win", i, createErr, deleteErr)
				}
			}
		})
	}
}
