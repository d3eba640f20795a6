package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// bufferPolicy is a target-based policy keeping pct percent of the
// fleet's game session capacity available.
func bufferPolicy(fleet, name string, pct float64) *gamelift.PutScalingPolicyInput {
	return &gamelift.PutScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String(name),
		PolicyType: types.PolicyTypeTargetBased, MetricName: types.MetricNamePercentAvailableGameSessions,
		TargetConfiguration: &types.TargetConfiguration{TargetValue: aws.Float64(pct)}}
}

// rulePolicy is a rule-based policy: if metric is op threshold for
// minutes, change the capacity by n instances.
func rulePolicy(fleet, name string, metric types.MetricName, op types.ComparisonOperatorType, threshold float64, minutes, n int32) *gamelift.PutScalingPolicyInput {
	return &gamelift.PutScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String(name), PolicyType: types.PolicyTypeRuleBased,
		MetricName: metric, ComparisonOperator: op, Threshold: aws.Float64(threshold), EvaluationPeriods: aws.Int32(minutes),
		ScalingAdjustmentType: types.ScalingAdjustmentTypeChangeInCapacity, ScalingAdjustment: aws.Int32(n)}
}

func putPolicy(t *testing.T, gl *gamelift.Client, in *gamelift.PutScalingPolicyInput) {
	t.Helper()
	out, err := gl.PutScalingPolicy(context.Background(), in)
	if err != nil || aws.ToString(out.Name) != aws.ToString(in.Name) {
		t.Fatalf("PutScalingPolicy %s: %+v %v", aws.ToString(in.Name), out, err)
	}
}

func policyNames(t *testing.T, gl *gamelift.Client, in *gamelift.DescribeScalingPoliciesInput) (string, *gamelift.DescribeScalingPoliciesOutput) {
	t.Helper()
	out, err := gl.DescribeScalingPolicies(context.Background(), in)
	if err != nil {
		t.Fatalf("DescribeScalingPolicies: %v", err)
	}
	var names []string
	for _, p := range out.ScalingPolicies {
		names = append(names, aws.ToString(p.Name)+"@"+aws.ToString(p.Location))
	}
	return strings.Join(names, " "), out
}

// TestScalingPolicyAPI: the shapes, statuses, filters and errors of
// PutScalingPolicy, DescribeScalingPolicies, DeleteScalingPolicy and
// Start/StopFleetActions.
func TestScalingPolicyAPI(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			createGroup(t, gl, gameServerGroup("arena"))
			f := createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{GameServerContainerGroupDefinitionName: aws.String("arena")})
			fleet := aws.ToString(f.FleetId)

			putPolicy(t, gl, bufferPolicy(aws.ToString(f.FleetArn), "buffer", 20))
			putPolicy(t, gl, rulePolicy(fleet, "idle", types.MetricNamePercentIdleInstances, types.ComparisonOperatorTypeGreaterThanThreshold, 50, 10, -1))
			names, out := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)})
			if names != "buffer@us-west-2 idle@us-west-2" || out.NextToken != nil {
				t.Fatalf("policies %s, token %v", names, out.NextToken)
			}
			b, r := out.ScalingPolicies[0], out.ScalingPolicies[1]
			if aws.ToString(b.FleetId) != fleet || aws.ToString(b.FleetArn) != aws.ToString(f.FleetArn) || b.Status != types.ScalingStatusTypeActive ||
				b.PolicyType != types.PolicyTypeTargetBased || b.MetricName != types.MetricNamePercentAvailableGameSessions ||
				b.TargetConfiguration == nil || aws.ToFloat64(b.TargetConfiguration.TargetValue) != 20 ||
				b.ComparisonOperator != "" || b.Threshold != nil || b.EvaluationPeriods != nil || b.ScalingAdjustment != nil {
				t.Errorf("target-based policy %+v", b)
			}
			if r.Status != types.ScalingStatusTypeActive || r.PolicyType != types.PolicyTypeRuleBased || r.MetricName != types.MetricNamePercentIdleInstances ||
				r.ComparisonOperator != types.ComparisonOperatorTypeGreaterThanThreshold || aws.ToFloat64(r.Threshold) != 50 ||
				aws.ToInt32(r.EvaluationPeriods) != 10 || r.ScalingAdjustmentType != types.ScalingAdjustmentTypeChangeInCapacity ||
				aws.ToInt32(r.ScalingAdjustment) != -1 || r.TargetConfiguration != nil {
				t.Errorf("rule-based policy %+v", r)
			}

			// Pages, and the filters.
			names, out = policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), Limit: aws.Int32(1)})
			if names != "buffer@us-west-2" || out.NextToken == nil {
				t.Fatalf("first page %s %v", names, out.NextToken)
			}
			if names, out = policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), Limit: aws.Int32(1), NextToken: out.NextToken}); names != "idle@us-west-2" || out.NextToken != nil {
				t.Errorf("second page %s %v", names, out.NextToken)
			}
			for filter, want := range map[types.ScalingStatusType]string{types.ScalingStatusTypeActive: "buffer@us-west-2 idle@us-west-2", types.ScalingStatusTypeDeleted: ""} {
				if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), StatusFilter: filter}); names != want {
					t.Errorf("StatusFilter %s: %q, want %q", filter, names, want)
				}
			}
			if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), Location: aws.String("us-west-2")}); names != "buffer@us-west-2 idle@us-west-2" {
				t.Errorf("Location filter: %s", names)
			}
			_, err := gl.DescribeScalingPolicies(ctx, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), Location: aws.String("eu-west-1")})
			wantAPIErr[*types.InvalidRequestException](t, "a location the fleet lacks", err)
			_, err = gl.DescribeScalingPolicies(ctx, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String("containerfleet-nope")})
			wantAPIErr[*types.NotFoundException](t, "policies of an unknown fleet", err)

			// A put of the same name replaces the policy.
			putPolicy(t, gl, bufferPolicy(fleet, "buffer", 35))
			if _, out = policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)}); aws.ToFloat64(out.ScalingPolicies[0].TargetConfiguration.TargetValue) != 35 {
				t.Errorf("replaced policy %+v", out.ScalingPolicies[0])
			}

			// Refusals change nothing.
			anywhere := aws.ToString(createAnywhereFleet(t, gl, anywhereFleet("any", "custom-a")).FleetId)
			wrongMetric := bufferPolicy(fleet, "buffer", 20)
			wrongMetric.MetricName = types.MetricNameActiveInstances
			withRule := bufferPolicy(fleet, "buffer", 20)
			withRule.Threshold = aws.Float64(3)
			noTarget := bufferPolicy(fleet, "buffer", 20)
			noTarget.TargetConfiguration = nil
			ruleWithTarget := rulePolicy(fleet, "idle", types.MetricNameIdleInstances, types.ComparisonOperatorTypeGreaterThanThreshold, 2, 5, -1)
			ruleWithTarget.TargetConfiguration = &types.TargetConfiguration{TargetValue: aws.Float64(5)}
			ruleNoThreshold := rulePolicy(fleet, "idle", types.MetricNameIdleInstances, types.ComparisonOperatorTypeGreaterThanThreshold, 2, 5, -1)
			ruleNoThreshold.Threshold = nil
			untyped := rulePolicy(fleet, "idle", types.MetricNameIdleInstances, types.ComparisonOperatorTypeGreaterThanThreshold, 2, 5, -1)
			untyped.PolicyType, untyped.ScalingAdjustmentType = "", types.ScalingAdjustmentTypeExactCapacity
			untyped.ScalingAdjustment = aws.Int32(-2)
			for what, in := range map[string]*gamelift.PutScalingPolicyInput{
				"a second target-based policy":            bufferPolicy(fleet, "another", 10),
				"a target-based policy on another metric": wrongMetric,
				"a target-based policy with a rule":       withRule,
				"a target-based policy without a target":  noTarget,
				"a buffer of 100%":                        bufferPolicy(fleet, "buffer", 100),
				"a buffer below 0":                        bufferPolicy(fleet, "buffer", -5),
				"a rule with a target":                    ruleWithTarget,
				"a rule without a threshold":              ruleNoThreshold,
				"an exact capacity below 0":               untyped,
				"an Anywhere fleet":                       bufferPolicy(anywhere, "buffer", 20),
			} {
				_, err := gl.PutScalingPolicy(ctx, in)
				wantAPIErr[*types.InvalidRequestException](t, what, err)
			}
			_, err = gl.PutScalingPolicy(ctx, bufferPolicy("containerfleet-nope", "buffer", 20))
			wantAPIErr[*types.NotFoundException](t, "an unknown fleet", err)
			if typ := env.CallJSON(t, "PutScalingPolicy", map[string]any{"FleetId": fleet, "Name": "x"}).ErrorType(t); typ != "InvalidRequestException" {
				t.Errorf("no metric: %s, want InvalidRequestException", typ)
			}
			if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)}); names != "buffer@us-west-2 idle@us-west-2" {
				t.Errorf("after refusals: %s", names)
			}
			if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(anywhere)}); names != "" {
				t.Errorf("policies of an Anywhere fleet: %s", names)
			}

			// Fleet actions: AUTO_SCALING stopped and started again, per
			// location; the policies stay ACTIVE.
			stopped := func() (fleetWide, location []types.FleetAction) {
				a, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet}})
				if err != nil {
					t.Fatal(err)
				}
				l, err := gl.DescribeFleetLocationAttributes(ctx, &gamelift.DescribeFleetLocationAttributesInput{FleetId: aws.String(fleet)})
				if err != nil {
					t.Fatal(err)
				}
				return a.FleetAttributes[0].StoppedActions, l.LocationAttributes[0].StoppedActions
			}
			stop, err := gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(fleet), Actions: []types.FleetAction{types.FleetActionAutoScaling}})
			if err != nil || aws.ToString(stop.FleetId) != fleet || aws.ToString(stop.FleetArn) != aws.ToString(f.FleetArn) {
				t.Fatalf("StopFleetActions: %+v %v", stop, err)
			}
			if a, l := stopped(); fmt.Sprint(a, l) != "[AUTO_SCALING] [AUTO_SCALING]" {
				t.Errorf("stopped actions %v %v", a, l)
			}
			if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet), StatusFilter: types.ScalingStatusTypeActive}); names != "buffer@us-west-2 idle@us-west-2" {
				t.Errorf("ACTIVE policies while stopped: %s", names)
			}
			if _, err := gl.StartFleetActions(ctx, &gamelift.StartFleetActionsInput{FleetId: aws.String(fleet), Location: aws.String("us-west-2"),
				Actions: []types.FleetAction{types.FleetActionAutoScaling}}); err != nil {
				t.Fatal(err)
			}
			if a, l := stopped(); a != nil || l != nil {
				t.Errorf("stopped actions after a start: %v %v", a, l)
			}
			_, err = gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(fleet), Location: aws.String("eu-west-1"), Actions: []types.FleetAction{types.FleetActionAutoScaling}})
			wantAPIErr[*types.InvalidRequestException](t, "stop in a location the fleet lacks", err)
			_, err = gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(anywhere), Actions: []types.FleetAction{types.FleetActionAutoScaling}})
			wantAPIErr[*types.InvalidRequestException](t, "stop an Anywhere fleet", err)
			_, err = gl.StartFleetActions(ctx, &gamelift.StartFleetActionsInput{FleetId: aws.String("containerfleet-nope"), Actions: []types.FleetAction{types.FleetActionAutoScaling}})
			wantAPIErr[*types.NotFoundException](t, "start an unknown fleet", err)
			if typ := env.CallJSON(t, "StopFleetActions", map[string]any{"FleetId": fleet}).ErrorType(t); typ != "InvalidRequestException" {
				t.Errorf("stop without actions: %s, want InvalidRequestException", typ)
			}

			// Delete: no record is kept.
			if _, err := gl.DeleteScalingPolicy(ctx, &gamelift.DeleteScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String("idle")}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DeleteScalingPolicy(ctx, &gamelift.DeleteScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String("idle")})
			wantAPIErr[*types.NotFoundException](t, "delete twice", err)
			_, err = gl.DeleteScalingPolicy(ctx, &gamelift.DeleteScalingPolicyInput{FleetId: aws.String("containerfleet-nope"), Name: aws.String("buffer")})
			wantAPIErr[*types.NotFoundException](t, "delete on an unknown fleet", err)
			if names, _ := policyNames(t, gl, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)}); names != "buffer@us-west-2" {
				t.Errorf("after the delete: %s", names)
			}
			// The fleet goes with its policies; a new fleet starts with none.
			if _, err := gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: aws.String(fleet)}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DescribeScalingPolicies(ctx, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)})
			wantAPIErr[*types.NotFoundException](t, "policies of a deleted fleet", err)
		})
	}
}

// desiredOf is the fleet's desired instances in its home region.
func desiredOf(t *testing.T, gl *gamelift.Client, fleet string) int32 {
	t.Helper()
	return aws.ToInt32(capacityOf(t, gl, fleet).InstanceCounts.DESIRED)
}

// scalingEvents lists the messages of the fleet's FLEET_SCALING_EVENTs.
func scalingEvents(t *testing.T, gl *gamelift.Client, fleet string) []string {
	t.Helper()
	out, err := gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range out.Events {
		if e.EventCode == types.EventCodeFleetScalingEvent {
			msgs = append(msgs, aws.ToString(e.Message))
		}
	}
	return msgs
}

// TestTargetScaling: a 20 % buffer on a container fleet, on real server
// processes, time moved by the test's clock. Each game session placed
// raises the desired capacity at once (without the clock moving) to keep
// a fifth of the game server slots, and at least two, available, within
// MaxSize; StopFleetActions holds it, StartFleetActions lets it act again;
// a fleet that needs less scales down only after needing less for five
// minutes, to the most it needed in them.
func TestTargetScaling(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			// The processes send no health reports while the clock jumps
			// minutes ahead: they stay healthy for a day.
			env, gl, clock := startFleetEnv(t, append(opts, func(c *server.Config) { c.UnhealthyTimeout = 24 * time.Hour }))
			ctx := context.Background()
			svc := env.Server.Service()
			createGroup(t, gl, gameServerGroup("arena"))
			fleet := aws.ToString(createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{
				GameServerContainerGroupDefinitionName: aws.String("arena")}).FleetId)
			if _, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
				DesiredInstances: aws.Int32(1), MinSize: aws.Int32(1), MaxSize: aws.Int32(7)}); err != nil {
				t.Fatal(err)
			}
			putPolicy(t, gl, bufferPolicy(fleet, "buffer", 20))
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 2 {
				t.Fatalf("an empty fleet wants %d instances, want 2 (two free servers)", d)
			}

			// Sessions fill the fleet: game server groups come as the
			// desired capacity asks (as the controller would start them).
			var sessions []*types.GameSession
			procs := map[string]*sdk.Process{}
			scaling := true // not stopped by StopFleetActions
			fill := func(n int, wantDesired int32) {
				t.Helper()
				for range n {
					for int32(len(procs)) < desiredOf(t, gl, fleet) {
						name := fmt.Sprintf("arena-%d", len(procs))
						procs[name] = containerGroupProcess(t, env, fleet, name, fmt.Sprintf("192.0.2.%d", 10+len(procs)), 4192)
					}
					changed := env.Server.Containers().CapacityChanged()
					var gs *gamelift.CreateGameSessionOutput
					fleettest.WaitFor(t, "a free process", func() bool {
						var err error
						gs, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
						return err == nil
					})
					sessions = append(sessions, gs.GameSession)
					d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
					if err != nil {
						t.Fatal(err)
					}
					p := procs[aws.ToString(d.GameSessions[0].ComputeName)]
					fleettest.WaitFor(t, "the session to reach its process", func() bool { return p.ActivateGameSession() == nil })
					if want := bufferInstances(len(sessions)); scaling && want <= 7 && want > desiredOf(t, gl, fleet) {
						// The session woke the scaler: no tick, no clock.
						select {
						case <-changed:
						case <-time.After(30 * time.Second):
							t.Fatalf("no scale-up 30 s after session %d", len(sessions))
						}
					}
				}
				svc.Sweep(ctx)
				if d := desiredOf(t, gl, fleet); d != wantDesired {
					t.Fatalf("%d sessions: desired %d, want %d", len(sessions), d, wantDesired)
				}
			}
			fill(1, 3) // 1 in use: 2 free (67 %)
			fill(1, 4) // 2 in use: ceil(2 / 0.8) = 3 would leave 1 free; 2 are
			fill(2, 6) // 4 in use: ceil(4 / 0.8) = 5 would leave 1 free; 2 are
			events := scalingEvents(t, gl, fleet)
			if len(events) != 6 || !strings.Contains(events[5], "Scaling policy buffer changed the desired instances of fleet "+fleet+" in us-west-2 from 5 to 6") {
				t.Errorf("scaling events %q", events)
			}

			// Stopped, it holds; started, it acts.
			if _, err := gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(fleet), Actions: []types.FleetAction{types.FleetActionAutoScaling}}); err != nil {
				t.Fatal(err)
			}
			scaling = false
			fill(1, 6) // 5 in use: ceil(6.25) = 7 wanted, but stopped
			scaling = true
			if _, err := gl.StartFleetActions(ctx, &gamelift.StartFleetActionsInput{FleetId: aws.String(fleet), Actions: []types.FleetAction{types.FleetActionAutoScaling}}); err != nil {
				t.Fatal(err)
			}
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 7 {
				t.Fatalf("started again: desired %d, want 7", d)
			}
			fill(1, 7) // 6 in use: 8 wanted, MaxSize 7

			// Sessions end: 1 in use wants 3; nothing moves for 5 minutes.
			// They end at one moment as the scaler sees them: its own
			// tick (each second of real time, at the test clock's time)
			// would otherwise count the fleet between two of the calls
			// below, needing more than 3 for the whole window.
			if _, err := gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(fleet), Actions: []types.FleetAction{types.FleetActionAutoScaling}}); err != nil {
				t.Fatal(err)
			}
			for _, gs := range sessions[1:] {
				if _, err := gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: gs.GameSessionId,
					TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
					t.Fatal(err)
				}
			}
			sessions = sessions[:1]
			if _, err := gl.StartFleetActions(ctx, &gamelift.StartFleetActionsInput{FleetId: aws.String(fleet), Actions: []types.FleetAction{types.FleetActionAutoScaling}}); err != nil {
				t.Fatal(err)
			}
			svc.Sweep(ctx)
			clock.Advance(4 * time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 7 {
				t.Fatalf("4 minutes after the sessions ended: desired %d, want 7", d)
			}
			// A second session in the window, on a new server: the fleet
			// needed 4 in it.
			procs["arena-new"] = containerGroupProcess(t, env, fleet, "arena-new", "192.0.2.99", 4192)
			fill(1, 7)
			if _, err := gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: sessions[1].GameSessionId,
				TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
				t.Fatal(err)
			}
			sessions = sessions[:1]
			clock.Advance(time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 4 {
				t.Fatalf("5 minutes of needing at most 4: desired %d, want 4; events %q", d, scalingEvents(t, gl, fleet))
			}
			// And 5 more minutes later, down to the 3 one session needs.
			clock.Advance(time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 4 {
				t.Fatalf("a minute after a scale-down: desired %d, want 4", d)
			}
			clock.Advance(4 * time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 3 {
				t.Fatalf("5 more minutes: desired %d, want 3", d)
			}
			events = scalingEvents(t, gl, fleet)
			if last := events[len(events)-1]; !strings.Contains(last, "from 4 to 3") || !strings.Contains(last, "at most 3 for the last 5m0s") {
				t.Errorf("last scaling event %q", last)
			}
		})
	}
}

// bufferInstances is what a 20 % buffer needs for used sessions, one
// game server container group an instance.
func bufferInstances(used int) int32 {
	slots := (used*5 + 3) / 4 // ceil(used / 0.8)
	return int32(max(slots, used+2))
}

// TestRuleScaling: a rule-based policy acts once its rule has held for
// its evaluation periods, and again only after as long again; within
// MaxSize.
func TestRuleScaling(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			svc := env.Server.Service()
			createGroup(t, gl, gameServerGroup("arena"))
			fleet := aws.ToString(createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{
				GameServerContainerGroupDefinitionName: aws.String("arena")}).FleetId)
			if _, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
				DesiredInstances: aws.Int32(1), MaxSize: aws.Int32(4)}); err != nil {
				t.Fatal(err)
			}
			// No server process runs: no game session is available.
			putPolicy(t, gl, rulePolicy(fleet, "grow", types.MetricNameAvailableGameSessions, types.ComparisonOperatorTypeLessThanThreshold, 1, 2, 2))
			svc.Sweep(ctx)
			clock.Advance(2*time.Minute - time.Second)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 1 {
				t.Fatalf("before 2 minutes: desired %d, want 1", d)
			}
			clock.Advance(time.Second)
			svc.Sweep(ctx)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 3 {
				t.Fatalf("after 2 minutes: desired %d, want 3", d)
			}
			clock.Advance(time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 3 {
				t.Fatalf("a minute after acting: desired %d, want 3", d)
			}
			clock.Advance(time.Minute)
			svc.Sweep(ctx)
			if d := desiredOf(t, gl, fleet); d != 4 {
				t.Fatalf("2 minutes after acting: desired %d, want 4 (MaxSize)", d)
			}
			if events := scalingEvents(t, gl, fleet); len(events) != 3 || !strings.Contains(events[1], "AvailableGameSessions was 0, LessThanThreshold 1, for 2 minutes") {
				t.Errorf("scaling events %q", events)
			}
		})
	}
}
