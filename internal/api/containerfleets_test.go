package api_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/game"
	sdk "github.com/anylift/anylift/sdk/server"
)

const roleARN = "arn:aws:iam::123456789012:role/gamelift-containers"

func createGroup(t *testing.T, gl *gamelift.Client, in *gamelift.CreateContainerGroupDefinitionInput) {
	t.Helper()
	if _, err := gl.CreateContainerGroupDefinition(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

func createContainerFleet(t *testing.T, gl *gamelift.Client, in *gamelift.CreateContainerFleetInput) *types.ContainerFleet {
	t.Helper()
	if in.FleetRoleArn == nil {
		in.FleetRoleArn = aws.String(roleARN)
	}
	out, err := gl.CreateContainerFleet(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateContainerFleet: %v", err)
	}
	return out.ContainerFleet
}

func eventCodes(t *testing.T, gl *gamelift.Client, fleet string) string {
	t.Helper()
	out, err := gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, e := range out.Events {
		codes = append(codes, string(e.EventCode))
	}
	return strings.Join(codes, " ")
}

func capacityOf(t *testing.T, gl *gamelift.Client, fleet string) types.FleetCapacity {
	t.Helper()
	out, err := gl.DescribeFleetCapacity(context.Background(), &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetCapacity) != 1 {
		t.Fatalf("DescribeFleetCapacity: %+v %v", out, err)
	}
	return out.FleetCapacity[0]
}

func TestContainerFleetLifecycle(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			createGroup(t, gl, gameServerGroup("arena"))
			f := createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{
				GameServerContainerGroupDefinitionName: aws.String("arena"), Description: aws.String("the arena"),
				Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}})
			id := aws.ToString(f.FleetId)
			if !strings.HasPrefix(id, "containerfleet-") || aws.ToString(f.FleetArn) != "arn:aws:gamelift:us-west-2:123456789012:fleet/"+id ||
				f.Status != types.ContainerFleetStatusActive || aws.ToString(f.FleetRoleArn) != roleARN ||
				aws.ToString(f.GameServerContainerGroupDefinitionArn) != cgdARN+"arena:1" || f.PerInstanceContainerGroupDefinitionName != nil ||
				aws.ToInt32(f.InstanceConnectionPortRange.FromPort) != 4192 || aws.ToInt32(f.InstanceConnectionPortRange.ToPort) != 4193 ||
				aws.ToInt32(f.GameServerContainerGroupsPerInstance) != 1 || f.BillingType != types.ContainerFleetBillingTypeOnDemand ||
				f.NewGameSessionProtectionPolicy != types.ProtectionPolicyNoProtection || !f.CreationTime.Equal(clock.Now()) ||
				len(f.LocationAttributes) != 1 || aws.ToString(f.LocationAttributes[0].Location) != "us-west-2" {
				t.Fatalf("created %+v", f)
			}
			d, err := gl.DescribeContainerFleet(ctx, &gamelift.DescribeContainerFleetInput{FleetId: f.FleetArn})
			if err != nil || aws.ToString(d.ContainerFleet.Description) != "the arena" {
				t.Errorf("DescribeContainerFleet by ARN: %+v %v", d, err)
			}
			// A container fleet is a fleet.
			attrs, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{id}})
			if err != nil || len(attrs.FleetAttributes) != 1 || attrs.FleetAttributes[0].ComputeType != types.ComputeType("CONTAINER") ||
				attrs.FleetAttributes[0].Status != types.FleetStatusActive {
				t.Errorf("DescribeFleetAttributes: %+v %v", attrs, err)
			}
			if got := eventCodes(t, gl, id); got != "FLEET_CREATED FLEET_STATE_ACTIVE" {
				t.Errorf("events %s", got)
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: f.FleetArn})
			if err != nil || len(tags.Tags) != 1 {
				t.Errorf("tags %+v %v", tags, err)
			}

			// Capacity: one instance wanted at first, none running.
			c := capacityOf(t, gl, id)
			if n := c.InstanceCounts; aws.ToInt32(n.DESIRED) != 1 || aws.ToInt32(n.MINIMUM) != 0 || aws.ToInt32(n.MAXIMUM) != 1 || aws.ToInt32(n.ACTIVE) != 0 ||
				c.GameServerContainerGroupCounts == nil || aws.ToInt32(c.GameServerContainerGroupCounts.IDLE) != 0 {
				t.Errorf("first capacity %+v %+v", c.InstanceCounts, c.GameServerContainerGroupCounts)
			}
			up, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(id), DesiredInstances: aws.Int32(3), MaxSize: aws.Int32(5)})
			if err != nil || aws.ToString(up.Location) != "us-west-2" || aws.ToString(up.FleetArn) != aws.ToString(f.FleetArn) {
				t.Fatalf("UpdateFleetCapacity: %+v %v", up, err)
			}
			_, err = gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(id), DesiredInstances: aws.Int32(6)})
			wantAPIErr[*types.InvalidRequestException](t, "desired over the maximum", err)
			_, err = gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(id), MinSize: aws.Int32(4)})
			wantAPIErr[*types.InvalidRequestException](t, "minimum over the desired", err)
			_, err = gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(id), Location: aws.String("eu-west-1"), DesiredInstances: aws.Int32(1)})
			wantAPIErr[*types.InvalidRequestException](t, "a location the fleet lacks", err)
			loc, err := gl.DescribeFleetLocationCapacity(ctx, &gamelift.DescribeFleetLocationCapacityInput{FleetId: aws.String(id), Location: aws.String("us-west-2")})
			if n := loc.FleetCapacity.InstanceCounts; err != nil || aws.ToInt32(n.DESIRED) != 3 || aws.ToInt32(n.MINIMUM) != 0 || aws.ToInt32(n.MAXIMUM) != 5 {
				t.Errorf("capacity after update: %+v %v", loc, err)
			}
			if got := eventCodes(t, gl, id); got != "FLEET_CREATED FLEET_STATE_ACTIVE FLEET_SCALING_EVENT" {
				t.Errorf("events after scaling %s", got)
			}

			// A new version of the definition, deployed by name.
			if _, err := gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("arena"),
				TotalMemoryLimitMebibytes: aws.Int32(2048)}); err != nil {
				t.Fatal(err)
			}
			u, err := gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: aws.String(id),
				GameServerContainerGroupDefinitionName: aws.String("arena"), GameServerContainerGroupsPerInstance: aws.Int32(2),
				NewGameSessionProtectionPolicy: types.ProtectionPolicyFullProtection,
				InstanceInboundPermissionAuthorizations: []types.IpPermission{{FromPort: aws.Int32(4192), ToPort: aws.Int32(4195),
					IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolUdp}}})
			if err != nil {
				t.Fatal(err)
			}
			uf := u.ContainerFleet
			if aws.ToString(uf.GameServerContainerGroupDefinitionArn) != cgdARN+"arena:2" || aws.ToInt32(uf.GameServerContainerGroupsPerInstance) != 2 ||
				uf.NewGameSessionProtectionPolicy != types.ProtectionPolicyFullProtection || len(uf.InstanceInboundPermissions) != 1 {
				t.Errorf("updated %+v", uf)
			}
			listed := func(ref string) int {
				out, err := gl.ListContainerFleets(ctx, &gamelift.ListContainerFleetsInput{ContainerGroupDefinitionName: aws.String(ref)})
				if err != nil {
					t.Fatal(err)
				}
				return len(out.ContainerFleets)
			}
			if listed("arena") != 1 || listed(cgdARN+"arena:2") != 1 || listed(cgdARN+"arena:1") != 0 || listed("other") != 0 {
				t.Errorf("ListContainerFleets by definition: %d %d %d %d", listed("arena"), listed(cgdARN+"arena:2"), listed(cgdARN+"arena:1"), listed("other"))
			}
			// A version a fleet runs stays; others go.
			_, err = gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("arena")})
			wantAPIErr[*types.InvalidRequestException](t, "delete a definition in use", err)
			if _, err := gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("arena"), VersionNumber: aws.Int32(1)}); err != nil {
				t.Errorf("delete a version no fleet runs: %v", err)
			}

			if _, err := gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: aws.String(id)}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DescribeContainerFleet(ctx, &gamelift.DescribeContainerFleetInput{FleetId: aws.String(id)})
			wantAPIErr[*types.NotFoundException](t, "deleted fleet", err)
			if _, err := gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("arena")}); err != nil {
				t.Errorf("delete the definition once no fleet runs it: %v", err)
			}
		})
	}
}

// TestContainerFleetWithoutGameServer: a fleet created without a game
// server container group is CREATED and hosts nothing until one is given.
func TestContainerFleetWithoutGameServer(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			f := createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{})
			id := aws.ToString(f.FleetId)
			if f.Status != types.ContainerFleetStatusCreated || aws.ToInt32(f.InstanceConnectionPortRange.FromPort) != 4192 {
				t.Fatalf("created %+v", f)
			}
			attrs, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{id}})
			if err != nil || attrs.FleetAttributes[0].Status != types.FleetStatusNew {
				t.Errorf("DescribeFleetAttributes: %+v %v", attrs, err)
			}
			_, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(id), MaximumPlayerSessionCount: aws.Int32(2)})
			wantAPIErr[*types.InvalidFleetStatusException](t, "a session on a CREATED fleet", err)
			createGroup(t, gl, gameServerGroup("arena"))
			u, err := gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: aws.String(id),
				GameServerContainerGroupDefinitionName: aws.String(cgdARN + "arena:1")})
			if err != nil || u.ContainerFleet.Status != types.ContainerFleetStatusActive {
				t.Fatalf("given a game server group: %+v %v", u, err)
			}
			if got := eventCodes(t, gl, id); got != "FLEET_CREATED FLEET_STATE_CREATED FLEET_STATE_ACTIVE" {
				t.Errorf("events %s", got)
			}
		})
	}
}

func TestContainerFleetRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			in := gameServerGroup("wide")
			in.GameServerContainerDefinition.PortConfiguration.ContainerPortRanges[0].ToPort = aws.Int32(7786) // 10 ports
			createGroup(t, gl, in)
			createGroup(t, gl, &gamelift.CreateContainerGroupDefinitionInput{
				Name: aws.String("daemons"), ContainerGroupType: types.ContainerGroupTypePerInstance,
				OperatingSystem: types.ContainerOperatingSystemAmazonLinux2023, TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
				SupportContainerDefinitions: []types.SupportContainerDefinitionInput{
					{ContainerName: aws.String("logs"), ImageUri: aws.String("registry.example/logs:3"), Essential: aws.Bool(true)}}})
			for what, in := range map[string]*gamelift.CreateContainerFleetInput{
				"unknown definition":     {GameServerContainerGroupDefinitionName: aws.String("nope")},
				"unknown version":        {GameServerContainerGroupDefinitionName: aws.String(cgdARN + "wide:7")},
				"per-instance as server": {GameServerContainerGroupDefinitionName: aws.String("daemons")},
				"server as per-instance": {GameServerContainerGroupDefinitionName: aws.String("wide"), PerInstanceContainerGroupDefinitionName: aws.String("wide")},
				"another region": {GameServerContainerGroupDefinitionName: aws.String("wide"),
					Locations: []types.LocationConfiguration{{Location: aws.String("eu-west-1")}}},
				"too few connection ports": {GameServerContainerGroupDefinitionName: aws.String("wide"), GameServerContainerGroupsPerInstance: aws.Int32(3),
					InstanceConnectionPortRange: &types.ConnectionPortRange{FromPort: aws.Int32(5000), ToPort: aws.Int32(5028)}},
				"ports downwards": {GameServerContainerGroupDefinitionName: aws.String("wide"),
					InstanceConnectionPortRange: &types.ConnectionPortRange{FromPort: aws.Int32(5000), ToPort: aws.Int32(4000)}},
			} {
				in.FleetRoleArn = aws.String(roleARN)
				_, err := gl.CreateContainerFleet(ctx, in)
				wantAPIErr[*types.InvalidRequestException](t, what, err)
			}
			list, err := gl.ListContainerFleets(ctx, &gamelift.ListContainerFleetsInput{})
			if err != nil || len(list.ContainerFleets) != 0 {
				t.Fatalf("after refusals: %+v %v", list, err)
			}
			f := createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{GameServerContainerGroupDefinitionName: aws.String("wide"),
				PerInstanceContainerGroupDefinitionName: aws.String("daemons"), GameServerContainerGroupsPerInstance: aws.Int32(3)})
			if aws.ToInt32(f.InstanceConnectionPortRange.ToPort) != 4192+30-1 {
				t.Errorf("default range for 3 groups of 10 ports: %+v", f.InstanceConnectionPortRange)
			}
			id := f.FleetId
			// A calculated range follows the groups; one asked for stays.
			u, err := gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: id, GameServerContainerGroupsPerInstance: aws.Int32(4)})
			if err != nil || aws.ToInt32(u.ContainerFleet.InstanceConnectionPortRange.ToPort) != 4192+40-1 {
				t.Errorf("calculated range for 4 groups: %+v %v", u, err)
			}
			if _, err := gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: id,
				InstanceConnectionPortRange: &types.ConnectionPortRange{FromPort: aws.Int32(5000), ToPort: aws.Int32(5039)}}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: id, GameServerContainerGroupsPerInstance: aws.Int32(5)})
			wantAPIErr[*types.InvalidRequestException](t, "more groups than the range asked for holds", err)
			_, err = gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: id, PerInstanceContainerGroupDefinitionName: aws.String("daemons"),
				RemoveAttributes: []types.ContainerFleetRemoveAttribute{types.ContainerFleetRemoveAttributePerInstanceContainerGroupDefinition}})
			wantAPIErr[*types.InvalidRequestException](t, "set and remove the per-instance group", err)
			u, err = gl.UpdateContainerFleet(ctx, &gamelift.UpdateContainerFleetInput{FleetId: id,
				RemoveAttributes: []types.ContainerFleetRemoveAttribute{types.ContainerFleetRemoveAttributePerInstanceContainerGroupDefinition}})
			if err != nil || u.ContainerFleet.PerInstanceContainerGroupDefinitionName != nil || aws.ToInt32(u.ContainerFleet.GameServerContainerGroupsPerInstance) != 4 {
				t.Errorf("remove the per-instance group: %+v %v", u, err)
			}
			_, err = gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: id, RuntimeConfiguration: &types.RuntimeConfiguration{
				ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/local/game/server"), ConcurrentExecutions: aws.Int32(1)}}}})
			wantAPIErr[*types.InvalidRequestException](t, "runtime configuration of a container fleet", err)
			_, err = gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: id, ComputeName: aws.String("mine"), Location: aws.String("us-west-2"), IpAddress: aws.String("10.0.0.1")})
			wantAPIErr[*types.InvalidRequestException](t, "register a compute to a container fleet", err)

			anywhere := createAnywhereFleet(t, gl, anywhereFleet("any", "custom-a")).FleetId
			_, err = gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: anywhere, DesiredInstances: aws.Int32(2)})
			wantAPIErr[*types.InvalidRequestException](t, "capacity of an Anywhere fleet", err)
			_, err = gl.DescribeContainerFleet(ctx, &gamelift.DescribeContainerFleetInput{FleetId: anywhere})
			wantAPIErr[*types.InvalidRequestException](t, "an Anywhere fleet as a container fleet", err)
			_, err = gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: anywhere})
			wantAPIErr[*types.InvalidRequestException](t, "delete an Anywhere fleet as a container fleet", err)
			_, err = gl.DescribeContainerFleet(ctx, &gamelift.DescribeContainerFleetInput{FleetId: aws.String("containerfleet-nope")})
			wantAPIErr[*types.NotFoundException](t, "unknown container fleet", err)
		})
	}
}

// containerGroupProcess registers game server container group name of the
// fleet, as whatever runs the fleet does (its container port 7777 reached
// at connection port port), reports it running at ip, and connects a real
// Go SDK process with the token it was given, ready on 7777.
func containerGroupProcess(t *testing.T, env *apitest.Env, fleet, name, ip string, port int) *sdk.Process {
	t.Helper()
	ctx := context.Background()
	svc := env.Server.Containers()
	token, err := svc.RegisterContainerCompute(ctx, containers.ContainerCompute{FleetID: fleet, Name: name, InstanceID: "instance-0",
		Ports: []game.PortMapping{{Container: "game", ContainerPort: 7777, ConnectionPort: port, Protocol: "UDP"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.ContainerComputeRunning(ctx, fleet, name, ip); err != nil {
		t.Fatal(err)
	}
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: env.Server.SDKEndpoint(), ProcessID: "game-" + name, HostID: name,
		FleetID: fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1,
		HealthCheckInterval: time.Hour, DrainTimeout: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Destroy() })
	if err := p.ProcessReady(sdk.ProcessParameters{Port: 7777, OnStartGameSession: func(sdk.GameSession) {}}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestContainerFleetHostsSessions: game server container groups, registered
// as whatever runs the fleet registers them, with real Go SDK processes,
// host game sessions placed directly and through a queue, at the
// connection port their container port maps to.
func TestContainerFleetHostsSessions(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			createGroup(t, gl, gameServerGroup("arena"))
			fleet := aws.ToString(createContainerFleet(t, gl, &gamelift.CreateContainerFleetInput{
				GameServerContainerGroupDefinitionName: aws.String("arena")}).FleetId)
			svc := env.Server.Containers()
			if _, err := svc.RegisterContainerCompute(ctx, containers.ContainerCompute{FleetID: fleet, Name: "arena-9", InstanceID: "instance-9"}); err != nil {
				t.Fatal(err)
			}
			c := capacityOf(t, gl, fleet)
			if g := c.GameServerContainerGroupCounts; aws.ToInt32(g.PENDING) != 1 || aws.ToInt32(c.InstanceCounts.PENDING) != 1 {
				t.Errorf("a starting group: %+v %+v", c.InstanceCounts, g)
			}
			if err := svc.RemoveContainerCompute(ctx, fleet, "arena-9"); err != nil {
				t.Fatal(err)
			}

			p := containerGroupProcess(t, env, fleet, "arena-0", "192.0.2.10", 4192)
			var gs *gamelift.CreateGameSessionOutput
			var err error
			fleettest.WaitFor(t, "the process to be free", func() bool {
				gs, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
				return err == nil
			})
			if aws.ToString(gs.GameSession.IpAddress) != "192.0.2.10" || aws.ToInt32(gs.GameSession.Port) != 4192 || aws.ToString(gs.GameSession.Location) != "us-west-2" {
				t.Errorf("session %+v, want 192.0.2.10:4192 in us-west-2", gs.GameSession)
			}
			fleettest.WaitFor(t, "the session to reach the process", func() bool { return p.ActivateGameSession() == nil })
			c = capacityOf(t, gl, fleet)
			if g := c.GameServerContainerGroupCounts; aws.ToInt32(g.ACTIVE) != 1 || aws.ToInt32(g.IDLE) != 0 ||
				aws.ToInt32(c.InstanceCounts.ACTIVE) != 1 || aws.ToInt32(c.InstanceCounts.IDLE) != 0 {
				t.Errorf("a busy group: %+v %+v", c.InstanceCounts, g)
			}
			search, err := gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String(fleet)})
			if err != nil || len(search.GameSessions) != 1 || aws.ToInt32(search.GameSessions[0].Port) != 4192 {
				t.Errorf("SearchGameSessions of the active session: %+v %v", search, err)
			}

			pm, err := gl.DescribeContainerGroupPortMappings(ctx, &gamelift.DescribeContainerGroupPortMappingsInput{FleetId: aws.String(fleet),
				ContainerGroupType: types.ContainerGroupTypeGameServer, ComputeName: aws.String("arena-0")})
			if err != nil || aws.ToString(pm.InstanceId) != "instance-0" || aws.ToString(pm.ContainerGroupDefinitionArn) != cgdARN+"arena:1" ||
				len(pm.ContainerGroupPortMappings) != 1 || aws.ToString(pm.ContainerGroupPortMappings[0].ContainerName) != "game" ||
				len(pm.ContainerGroupPortMappings[0].ContainerPortMappings) != 1 ||
				aws.ToInt32(pm.ContainerGroupPortMappings[0].ContainerPortMappings[0].ConnectionPort) != 4192 {
				t.Errorf("DescribeContainerGroupPortMappings: %+v %v", pm, err)
			}
			_, err = gl.DescribeContainerGroupPortMappings(ctx, &gamelift.DescribeContainerGroupPortMappingsInput{FleetId: aws.String(fleet),
				ContainerGroupType: types.ContainerGroupTypeGameServer, ComputeName: aws.String("arena-0"), ContainerName: aws.String("sidecar")})
			wantAPIErr[*types.NotFoundException](t, "port mappings of a container without ports", err)

			// Through a queue, onto a second group.
			if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("arena-queue"),
				Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(fleet)}}}); err != nil {
				t.Fatal(err)
			}
			p2 := containerGroupProcess(t, env, fleet, "arena-1", "192.0.2.11", 4193)
			if _, err := gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("p-1"),
				GameSessionQueueName: aws.String("arena-queue"), MaximumPlayerSessionCount: aws.Int32(4)}); err != nil {
				t.Fatal(err)
			}
			fleettest.WaitFor(t, "the placed session to reach the process", func() bool { return p2.ActivateGameSession() == nil })
			var placed *types.GameSessionPlacement
			fleettest.WaitFor(t, "the placement", func() bool {
				d, err := gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("p-1")})
				if err != nil {
					t.Fatal(err)
				}
				placed = d.GameSessionPlacement
				return placed.Status != types.GameSessionPlacementStatePending
			})
			if placed.Status != types.GameSessionPlacementStateFulfilled || aws.ToString(placed.IpAddress) != "192.0.2.11" || aws.ToInt32(placed.Port) != 4193 {
				t.Errorf("placement %s at %s:%d, want FULFILLED at 192.0.2.11:4193", placed.Status, aws.ToString(placed.IpAddress), aws.ToInt32(placed.Port))
			}

			// A group goes: its session ends with it.
			if err := svc.RemoveContainerCompute(ctx, fleet, "arena-0"); err != nil {
				t.Fatal(err)
			}
			d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
			if err != nil || len(d.GameSessions) != 1 || d.GameSessions[0].Status != types.GameSessionStatusTerminated {
				t.Errorf("session of a removed group: %+v %v", d, err)
			}
			if err := svc.RemoveContainerCompute(ctx, fleet, "arena-0"); err != nil {
				t.Errorf("removing a group twice: %v", err)
			}
		})
	}
}
