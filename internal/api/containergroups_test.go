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

const (
	cgdARN = "arn:aws:gamelift:us-west-2:123456789012:containergroupdefinition/"
	digest = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
)

// gameServerGroup is a valid GAME_SERVER definition: a game server
// container and a support container that starts first.
func gameServerGroup(name string) *gamelift.CreateContainerGroupDefinitionInput {
	return &gamelift.CreateContainerGroupDefinitionInput{
		Name:                      aws.String(name),
		OperatingSystem:           types.ContainerOperatingSystemAmazonLinux2023,
		TotalMemoryLimitMebibytes: aws.Int32(1024),
		TotalVcpuLimit:            aws.Float64(1),
		GameServerContainerDefinition: &types.GameServerContainerDefinitionInput{
			ContainerName:    aws.String("game"),
			ImageUri:         aws.String("registry.example/game:1.0"),
			ServerSdkVersion: aws.String("5.2.0"),
			PortConfiguration: &types.ContainerPortConfiguration{ContainerPortRanges: []types.ContainerPortRange{
				{FromPort: aws.Int32(7777), ToPort: aws.Int32(7778), Protocol: types.IpProtocolUdp}}},
			EnvironmentOverride: []types.ContainerEnvironment{{Name: aws.String("MAP"), Value: aws.String("harbour")}},
			DependsOn:           []types.ContainerDependency{{ContainerName: aws.String("sidecar"), Condition: types.ContainerDependencyConditionStart}},
		},
		SupportContainerDefinitions: []types.SupportContainerDefinitionInput{{
			ContainerName:            aws.String("sidecar"),
			ImageUri:                 aws.String("registry.example/metrics@" + digest),
			MemoryHardLimitMebibytes: aws.Int32(128),
			Vcpu:                     aws.Float64(0.25),
			Essential:                aws.Bool(true),
			HealthCheck:              &types.ContainerHealthCheck{Command: []string{"CMD", "true"}, Interval: aws.Int32(60)},
		}},
	}
}

func TestContainerGroupDefinitionLifecycle(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, clock := startFleetEnv(t, opts)
			ctx := context.Background()
			in := gameServerGroup("arena")
			in.VersionDescription = aws.String("first")
			in.Tags = []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}
			out, err := gl.CreateContainerGroupDefinition(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			d := out.ContainerGroupDefinition
			gs := d.GameServerContainerDefinition
			if aws.ToString(d.ContainerGroupDefinitionArn) != cgdARN+"arena:1" || aws.ToInt32(d.VersionNumber) != 1 ||
				d.Status != types.ContainerGroupDefinitionStatusReady || d.ContainerGroupType != types.ContainerGroupTypeGameServer ||
				!d.CreationTime.Equal(clock.Now()) || aws.ToString(d.VersionDescription) != "first" ||
				aws.ToInt32(d.TotalMemoryLimitMebibytes) != 1024 || aws.ToFloat64(d.TotalVcpuLimit) != 1 ||
				gs == nil || aws.ToString(gs.ImageUri) != "registry.example/game:1.0" || gs.ResolvedImageDigest != nil ||
				aws.ToString(gs.ServerSdkVersion) != "5.2.0" || len(gs.PortConfiguration.ContainerPortRanges) != 1 ||
				len(gs.EnvironmentOverride) != 1 || len(gs.DependsOn) != 1 {
				t.Fatalf("created %+v", d)
			}
			if len(d.SupportContainerDefinitions) != 1 {
				t.Fatalf("support containers %+v", d.SupportContainerDefinitions)
			}
			sc := d.SupportContainerDefinitions[0]
			if aws.ToString(sc.ResolvedImageDigest) != digest || !aws.ToBool(sc.Essential) || aws.ToInt32(sc.MemoryHardLimitMebibytes) != 128 ||
				aws.ToFloat64(sc.Vcpu) != 0.25 || sc.HealthCheck == nil || aws.ToInt32(sc.HealthCheck.Interval) != 60 {
				t.Errorf("support container %+v", sc)
			}

			// A new version from the latest: the members given replace
			// the source's, the rest stays.
			clock.Advance(time.Second)
			upd, err := gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{
				Name: aws.String("arena"), TotalMemoryLimitMebibytes: aws.Int32(2048), VersionDescription: aws.String("more memory")})
			if err != nil {
				t.Fatal(err)
			}
			v2 := upd.ContainerGroupDefinition
			if aws.ToString(v2.ContainerGroupDefinitionArn) != cgdARN+"arena:2" || aws.ToInt32(v2.TotalMemoryLimitMebibytes) != 2048 ||
				aws.ToString(v2.GameServerContainerDefinition.ImageUri) != "registry.example/game:1.0" || len(v2.SupportContainerDefinitions) != 1 ||
				aws.ToString(v2.VersionDescription) != "more memory" || !v2.CreationTime.Equal(clock.Now()) {
				t.Errorf("version 2 %+v", v2)
			}
			// From version 1 by its ARN, dropping the support container.
			gsIn := gameServerGroup("x").GameServerContainerDefinition
			gsIn.ImageUri, gsIn.DependsOn = aws.String("registry.example/game:2.0"), nil
			upd, err = gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{
				Name: aws.String(cgdARN + "arena:1"), GameServerContainerDefinition: gsIn,
				SupportContainerDefinitions: []types.SupportContainerDefinitionInput{}})
			if err != nil {
				t.Fatal(err)
			}
			v3 := upd.ContainerGroupDefinition
			if aws.ToInt32(v3.VersionNumber) != 3 || aws.ToInt32(v3.TotalMemoryLimitMebibytes) != 1024 || len(v3.SupportContainerDefinitions) != 0 ||
				aws.ToString(v3.GameServerContainerDefinition.ImageUri) != "registry.example/game:2.0" || v3.VersionDescription != nil {
				t.Errorf("version 3 from version 1 %+v", v3)
			}

			for _, tc := range []struct {
				in      gamelift.DescribeContainerGroupDefinitionInput
				version int32
			}{
				{gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String("arena")}, 3},
				{gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String(cgdARN + "arena")}, 3},
				{gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String(cgdARN + "arena:2")}, 2},
				{gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String("arena"), VersionNumber: aws.Int32(1)}, 1},
			} {
				got, err := gl.DescribeContainerGroupDefinition(ctx, &tc.in)
				if err != nil || aws.ToInt32(got.ContainerGroupDefinition.VersionNumber) != tc.version {
					t.Errorf("Describe(%s, %d) = %+v %v, want version %d", aws.ToString(tc.in.Name), aws.ToInt32(tc.in.VersionNumber), got, err, tc.version)
				}
			}
			if got := versionsOf(t, gl, "arena", 0); got != "3,2,1" {
				t.Errorf("versions %s, want newest first", got)
			}

			// Tags live on the definition, whichever version's ARN names it.
			if _, err := gl.TagResource(ctx, &gamelift.TagResourceInput{ResourceARN: aws.String(cgdARN + "arena:2"),
				Tags: []types.Tag{{Key: aws.String("stage"), Value: aws.String("beta")}}}); err != nil {
				t.Fatal(err)
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: aws.String(cgdARN + "arena")})
			if err != nil || len(tags.Tags) != 2 {
				t.Errorf("tags %+v %v", tags, err)
			}

			// Deleting versions: one, then all but the newest; the numbers
			// of deleted versions are not given out again.
			if _, err := gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{
				Name: aws.String("arena"), VersionNumber: aws.Int32(3)}); err != nil {
				t.Fatal(err)
			}
			if upd, err := gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("arena")}); err != nil ||
				aws.ToInt32(upd.ContainerGroupDefinition.VersionNumber) != 4 {
				t.Errorf("update after deleting the latest: %+v %v, want version 4", upd, err)
			}
			if _, err := gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{
				Name: aws.String("arena"), VersionCountToRetain: aws.Int32(1)}); err != nil {
				t.Fatal(err)
			}
			if got := versionsOf(t, gl, "arena", 0); got != "4" {
				t.Errorf("after retaining 1: versions %s", got)
			}
			_, err = gl.DescribeContainerGroupDefinition(ctx, &gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String("arena"), VersionNumber: aws.Int32(1)})
			wantAPIErr[*types.NotFoundException](t, "deleted version", err)

			// The whole definition, and its tags with it.
			if _, err := gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String(cgdARN + "arena")}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DescribeContainerGroupDefinition(ctx, &gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String("arena")})
			wantAPIErr[*types.NotFoundException](t, "deleted definition", err)
			_, err = gl.ListContainerGroupDefinitionVersions(ctx, &gamelift.ListContainerGroupDefinitionVersionsInput{Name: aws.String("arena")})
			wantAPIErr[*types.NotFoundException](t, "versions of a deleted definition", err)
			_, err = gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("arena")})
			wantAPIErr[*types.NotFoundException](t, "second delete", err)
			if _, err := gl.CreateContainerGroupDefinition(ctx, gameServerGroup("arena")); err != nil {
				t.Fatalf("name taken again after delete: %v", err)
			}
			tags, err = gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: aws.String(cgdARN + "arena")})
			if err != nil || len(tags.Tags) != 0 {
				t.Errorf("tags of the deleted definition came back: %+v %v", tags, err)
			}
		})
	}
}

// versionsOf lists a definition's version numbers, page by page.
func versionsOf(t *testing.T, gl *gamelift.Client, name string, limit int32) string {
	t.Helper()
	in := &gamelift.ListContainerGroupDefinitionVersionsInput{Name: aws.String(name)}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	var got []string
	p := gamelift.NewListContainerGroupDefinitionVersionsPaginator(gl, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.ContainerGroupDefinitions {
			got = append(got, fmt.Sprint(aws.ToInt32(d.VersionNumber)))
		}
	}
	return strings.Join(got, ",")
}

func TestContainerGroupDefinitionLists(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			for _, n := range []string{"c", "a", "b"} {
				if _, err := gl.CreateContainerGroupDefinition(ctx, gameServerGroup(n)); err != nil {
					t.Fatal(err)
				}
			}
			perInstance := &gamelift.CreateContainerGroupDefinitionInput{
				Name: aws.String("daemons"), ContainerGroupType: types.ContainerGroupTypePerInstance,
				OperatingSystem: types.ContainerOperatingSystemAmazonLinux2023, TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
				SupportContainerDefinitions: []types.SupportContainerDefinitionInput{
					{ContainerName: aws.String("logs"), ImageUri: aws.String("registry.example/logs:3"), Essential: aws.Bool(true)}},
			}
			if _, err := gl.CreateContainerGroupDefinition(ctx, perInstance); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("b")}); err != nil {
					t.Fatal(err)
				}
			}
			list := func(typ types.ContainerGroupType) string {
				var got []string
				p := gamelift.NewListContainerGroupDefinitionsPaginator(gl, &gamelift.ListContainerGroupDefinitionsInput{ContainerGroupType: typ, Limit: aws.Int32(2)})
				for p.HasMorePages() {
					page, err := p.NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range page.ContainerGroupDefinitions {
						got = append(got, fmt.Sprintf("%s:%d", aws.ToString(d.Name), aws.ToInt32(d.VersionNumber)))
					}
				}
				return strings.Join(got, " ")
			}
			if got := list(""); got != "a:1 b:3 c:1 daemons:1" {
				t.Errorf("all, latest versions: %s", got)
			}
			if got := list(types.ContainerGroupTypePerInstance); got != "daemons:1" {
				t.Errorf("PER_INSTANCE: %s", got)
			}
			if got := list(types.ContainerGroupTypeGameServer); got != "a:1 b:3 c:1" {
				t.Errorf("GAME_SERVER: %s", got)
			}
			if got := versionsOf(t, gl, "b", 2); got != "3,2,1" {
				t.Errorf("versions of b in pages of 2: %s", got)
			}
			_, err := gl.ListContainerGroupDefinitions(ctx, &gamelift.ListContainerGroupDefinitionsInput{NextToken: aws.String("not-ours")})
			wantAPIErr[*types.InvalidRequestException](t, "foreign NextToken", err)
			_, err = gl.ListContainerGroupDefinitions(ctx, &gamelift.ListContainerGroupDefinitionsInput{Limit: aws.Int32(101)})
			wantAPIErr[*types.InvalidRequestException](t, "Limit 101", err)
		})
	}
}

func TestContainerGroupDefinitionRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts)
			ctx := context.Background()
			if _, err := gl.CreateContainerGroupDefinition(ctx, gameServerGroup("taken")); err != nil {
				t.Fatal(err)
			}
			_, err := gl.CreateContainerGroupDefinition(ctx, gameServerGroup("taken"))
			wantAPIErr[*types.ConflictException](t, "name taken", err)

			bad := map[string]func(in *gamelift.CreateContainerGroupDefinitionInput){
				"name pattern":       func(in *gamelift.CreateContainerGroupDefinitionInput) { in.Name = aws.String("no_underscores") },
				"vCPU under the min": func(in *gamelift.CreateContainerGroupDefinitionInput) { in.TotalVcpuLimit = aws.Float64(0.1) },
				"image with a space": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.ImageUri = aws.String("game 1")
				},
				"no game server": func(in *gamelift.CreateContainerGroupDefinitionInput) { in.GameServerContainerDefinition = nil },
				"PER_INSTANCE with a game server": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.ContainerGroupType = types.ContainerGroupTypePerInstance
				},
				"PER_INSTANCE without an essential container": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.ContainerGroupType, in.GameServerContainerDefinition = types.ContainerGroupTypePerInstance, nil
					in.SupportContainerDefinitions[0].Essential = aws.Bool(false)
				},
				"old server SDK": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.ServerSdkVersion = aws.String("5.1.9")
				},
				"a name twice": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.SupportContainerDefinitions[0].ContainerName = aws.String("game")
				},
				"dependency on nothing": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.DependsOn[0].ContainerName = aws.String("ghost")
				},
				"dependency on itself": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.DependsOn[0].ContainerName = aws.String("game")
				},
				"dependency cycle": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.SupportContainerDefinitions[0].DependsOn = []types.ContainerDependency{{ContainerName: aws.String("game"), Condition: types.ContainerDependencyConditionStart}}
				},
				"COMPLETE on an essential container": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.DependsOn[0].Condition = types.ContainerDependencyConditionComplete
				},
				"ports downwards": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.GameServerContainerDefinition.PortConfiguration.ContainerPortRanges[0].FromPort = aws.Int32(8000)
				},
				"ports overlapping": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.SupportContainerDefinitions[0].PortConfiguration = &types.ContainerPortConfiguration{ContainerPortRanges: []types.ContainerPortRange{
						{FromPort: aws.Int32(7778), ToPort: aws.Int32(7790), Protocol: types.IpProtocolUdp}}}
				},
				"container memory over the group's": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.SupportContainerDefinitions[0].MemoryHardLimitMebibytes = aws.Int32(2048)
				},
				"container vCPU over the group's": func(in *gamelift.CreateContainerGroupDefinitionInput) {
					in.SupportContainerDefinitions[0].Vcpu = aws.Float64(2)
				},
			}
			for what, change := range bad {
				in := gameServerGroup("refused")
				change(in)
				_, err := gl.CreateContainerGroupDefinition(ctx, in)
				wantAPIErr[*types.InvalidRequestException](t, what, err)
			}
			// The same checks hold for the version an update makes.
			_, err = gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("taken"), TotalVcpuLimit: aws.Float64(0.125)})
			wantAPIErr[*types.InvalidRequestException](t, "update under the containers' vCPU", err)
			_, err = gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("taken"), SourceVersionNumber: aws.Int32(9)})
			wantAPIErr[*types.NotFoundException](t, "update from a missing version", err)
			_, err = gl.UpdateContainerGroupDefinition(ctx, &gamelift.UpdateContainerGroupDefinitionInput{Name: aws.String("missing")})
			wantAPIErr[*types.NotFoundException](t, "update a missing definition", err)
			_, err = gl.DescribeContainerGroupDefinition(ctx, &gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String(cgdARN + "taken:1"), VersionNumber: aws.Int32(2)})
			wantAPIErr[*types.InvalidRequestException](t, "ARN and VersionNumber disagree", err)
			_, err = gl.DescribeContainerGroupDefinition(ctx, &gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String("taken"), VersionNumber: aws.Int32(2)})
			wantAPIErr[*types.NotFoundException](t, "describe a missing version", err)
			_, err = gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("taken"),
				VersionNumber: aws.Int32(1), VersionCountToRetain: aws.Int32(1)})
			wantAPIErr[*types.InvalidRequestException](t, "version and count to retain", err)
			_, err = gl.DeleteContainerGroupDefinition(ctx, &gamelift.DeleteContainerGroupDefinitionInput{Name: aws.String("taken"), VersionNumber: aws.Int32(5)})
			wantAPIErr[*types.NotFoundException](t, "delete a missing version", err)

			// Nothing refused left a trace.
			list, err := gl.ListContainerGroupDefinitions(ctx, &gamelift.ListContainerGroupDefinitionsInput{})
			if err != nil || len(list.ContainerGroupDefinitions) != 1 {
				t.Fatalf("after refusals: %+v %v", list, err)
			}
			if got := versionsOf(t, gl, "taken", 0); got != "1" {
				t.Errorf("after refusals, versions %s", got)
			}
		})
	}
}

// TestContainerGroupDefinitionJSON speaks AWS JSON 1.1 by hand, as botocore
// does: the answer's members and numbers as GameLift writes them, and a
// refusal's type.
func TestContainerGroupDefinitionJSON(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env, _, _ := startFleetEnv(t, opts)
			r := env.CallJSON(t, "CreateContainerGroupDefinition", `{"Name": "duel", "OperatingSystem": "AMAZON_LINUX_2023",
				"TotalMemoryLimitMebibytes": 512, "TotalVcpuLimit": 0.5,
				"GameServerContainerDefinition": {"ContainerName": "server", "ImageUri": "registry.example/duel@`+digest+`",
					"ServerSdkVersion": "5.3.0",
					"PortConfiguration": {"ContainerPortRanges": [{"FromPort": 9000, "ToPort": 9000, "Protocol": "TCP"}]}}}`)
			if r.Status != http.StatusOK {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			d, _ := r.JSON(t)["ContainerGroupDefinition"].(map[string]any)
			gs, _ := d["GameServerContainerDefinition"].(map[string]any)
			if d["ContainerGroupDefinitionArn"] != cgdARN+"duel:1" || d["ContainerGroupType"] != "GAME_SERVER" || d["Status"] != "READY" ||
				d["TotalVcpuLimit"] != 0.5 || d["VersionNumber"] != 1.0 || gs["ResolvedImageDigest"] != digest {
				t.Errorf("answer %s", r.Body)
			}
			if _, ok := d["SupportContainerDefinitions"]; ok {
				t.Errorf("an empty list is sent: %s", r.Body)
			}
			if _, ok := d["CreationTime"].(float64); !ok {
				t.Errorf("CreationTime is not epoch seconds: %s", r.Body)
			}
			r = env.CallJSON(t, "DescribeContainerGroupDefinition", `{"Name": "nope"}`)
			if r.Status != http.StatusBadRequest || r.ErrorType(t) != "NotFoundException" {
				t.Errorf("unknown name: %d %s", r.Status, r.Body)
			}
			r = env.CallJSON(t, "CreateContainerGroupDefinition", `{"Name": "x", "OperatingSystem": "WINDOWS", "TotalMemoryLimitMebibytes": 512, "TotalVcpuLimit": 1}`)
			if r.Status != http.StatusBadRequest || r.ErrorType(t) != "InvalidRequestException" {
				t.Errorf("unknown operating system: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestContainerGroupDefinitionRights: a key limited to some definitions
// acts on those, whatever version or ARN a request names.
func TestContainerGroupDefinitionRights(t *testing.T) {
	f := &files{t: t, dir: t.TempDir()}
	f.write("arena.json", `{"Statement": [{"Effect": "Allow", "Action": "gamelift:*ContainerGroupDefinition*",
		"Resource": "arn:aws:gamelift:*:*:containergroupdefinition/arena*"}]}`)
	creds := f.write("credentials", "AKIDARENA secret-arena arena.json\n")
	env, gl, _ := startFleetEnv(t, []apitest.Option{apitest.WithCredentialsFile(creds)})
	if _, err := gl.CreateContainerGroupDefinition(context.Background(), gameServerGroup("other")); err != nil {
		t.Fatal(err)
	}
	arena := env.ClientAs("AKIDARENA", "secret-arena")
	ctx := context.Background()
	if _, err := arena.CreateContainerGroupDefinition(ctx, gameServerGroup("arena-eu")); err != nil {
		t.Fatalf("its own: %v", err)
	}
	if _, err := arena.DescribeContainerGroupDefinition(ctx, &gamelift.DescribeContainerGroupDefinitionInput{Name: aws.String(cgdARN + "arena-eu:1")}); err != nil {
		t.Fatalf("its own by versioned ARN: %v", err)
	}
	wantDenied(t, env.CallJSONAs(t, "AKIDARENA", "secret-arena", "DescribeContainerGroupDefinition", `{"Name": "other"}`),
		"User: arn:aws:iam::123456789012:user/AKIDARENA is not authorized to perform: gamelift:DescribeContainerGroupDefinition on resource: "+
			cgdARN+"other because no identity-based policy allows the gamelift:DescribeContainerGroupDefinition action")
	wantDenied(t, env.CallJSONAs(t, "AKIDARENA", "secret-arena", "DeleteContainerGroupDefinition", `{"Name": "`+cgdARN+`other:1"}`),
		"User: arn:aws:iam::123456789012:user/AKIDARENA is not authorized to perform: gamelift:DeleteContainerGroupDefinition on resource: "+
			cgdARN+"other because no identity-based policy allows the gamelift:DeleteContainerGroupDefinition action")
}
