package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/apitest"
)

func errCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func queueDest(ids ...string) []types.GameSessionQueueDestination {
	var out []types.GameSessionQueueDestination
	for _, id := range ids {
		out = append(out, types.GameSessionQueueDestination{DestinationArn: aws.String(id)})
	}
	return out
}

func TestGameSessionQueueLifecycle(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a"))
			al, err := gl.CreateAlias(ctx, simpleAlias("live", f.FleetId))
			if err != nil {
				t.Fatal(err)
			}
			dests := queueDest(aws.ToString(f.FleetId), aws.ToString(f.FleetArn), aws.ToString(al.Alias.AliasId), aws.ToString(al.Alias.AliasArn))
			out, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("main"), Destinations: dests,
				TimeoutInSeconds: aws.Int32(120), NotificationTarget: aws.String("http://127.0.0.1:9/hook"),
				PlayerLatencyPolicies: []types.PlayerLatencyPolicy{{MaximumIndividualPlayerLatencyMilliseconds: aws.Int32(100)}},
				FilterConfiguration:   &types.FilterConfiguration{AllowedLocations: []string{"custom-a"}},
				PriorityConfiguration: &types.PriorityConfiguration{PriorityOrder: []types.PriorityType{types.PriorityTypeCost}},
				Tags:                  []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}})
			if err != nil {
				t.Fatal(err)
			}
			q := out.GameSessionQueue
			if aws.ToString(q.GameSessionQueueArn) != "arn:aws:gamelift:us-west-2:123456789012:gamesessionqueue/main" || len(q.Destinations) != 4 ||
				aws.ToInt32(q.TimeoutInSeconds) != 120 || aws.ToString(q.NotificationTarget) != "http://127.0.0.1:9/hook" ||
				q.FilterConfiguration == nil || q.PriorityConfiguration.PriorityOrder[0] != types.PriorityTypeCost {
				t.Errorf("created %+v", q)
			}
			tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: q.GameSessionQueueArn})
			if err != nil || len(tags.Tags) != 1 {
				t.Errorf("tags %+v %v", tags, err)
			}
			if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("main")}); errCode(err) != "InvalidRequestException" {
				t.Errorf("duplicate name: %v", err)
			}
			for _, n := range []string{"b", "c"} {
				if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String(n)}); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			pages := gamelift.NewDescribeGameSessionQueuesPaginator(gl, &gamelift.DescribeGameSessionQueuesInput{Limit: aws.Int32(1)})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range page.GameSessionQueues {
					names = append(names, aws.ToString(q.Name))
				}
			}
			if strings.Join(names, ",") != "b,c,main" {
				t.Errorf("paged %v", names)
			}
			byName, err := gl.DescribeGameSessionQueues(ctx, &gamelift.DescribeGameSessionQueuesInput{Names: []string{"nope", aws.ToString(q.GameSessionQueueArn)}})
			if err != nil || len(byName.GameSessionQueues) != 1 || aws.ToString(byName.GameSessionQueues[0].Name) != "main" {
				t.Errorf("by name %+v %v", byName, err)
			}
			up, err := gl.UpdateGameSessionQueue(ctx, &gamelift.UpdateGameSessionQueueInput{Name: q.GameSessionQueueArn,
				Destinations: queueDest(aws.ToString(f.FleetId)), FilterConfiguration: &types.FilterConfiguration{},
				PriorityConfiguration: &types.PriorityConfiguration{}, TimeoutInSeconds: aws.Int32(30)})
			if err != nil || len(up.GameSessionQueue.Destinations) != 1 || up.GameSessionQueue.FilterConfiguration != nil ||
				up.GameSessionQueue.PriorityConfiguration != nil || aws.ToInt32(up.GameSessionQueue.TimeoutInSeconds) != 30 ||
				len(up.GameSessionQueue.PlayerLatencyPolicies) != 1 {
				t.Errorf("updated %+v %v", up, err)
			}
			if _, err := gl.DeleteGameSessionQueue(ctx, &gamelift.DeleteGameSessionQueueInput{Name: aws.String("main")}); err != nil {
				t.Fatal(err)
			}
			if _, err := gl.DeleteGameSessionQueue(ctx, &gamelift.DeleteGameSessionQueueInput{Name: aws.String("main")}); errCode(err) != "NotFoundException" {
				t.Errorf("second delete: %v", err)
			}
			if _, err := gl.UpdateGameSessionQueue(ctx, &gamelift.UpdateGameSessionQueueInput{Name: aws.String("main")}); errCode(err) != "NotFoundException" {
				t.Errorf("update deleted: %v", err)
			}
		})
	}
}

func TestGameSessionQueueAndPlacementBadInput(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			_, gl, _ := startFleetEnv(t, opts, "custom-a")
			ctx := context.Background()
			f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a"))
			for _, tc := range []struct {
				name string
				in   *gamelift.CreateGameSessionQueueInput
				code string
			}{
				{"unknown fleet", &gamelift.CreateGameSessionQueueInput{Destinations: queueDest("fleet-00000000-0000-0000-0000-000000000000")}, "NotFoundException"},
				{"unknown alias ARN", &gamelift.CreateGameSessionQueueInput{Destinations: queueDest("arn:aws:gamelift:us-west-2:123456789012:alias/alias-x")}, "NotFoundException"},
				{"not a fleet or alias", &gamelift.CreateGameSessionQueueInput{Destinations: queueDest("queue-1")}, "InvalidRequestException"},
				{"timeout below 10", &gamelift.CreateGameSessionQueueInput{TimeoutInSeconds: aws.Int32(5)}, "InvalidRequestException"},
				{"LOCATION without LocationOrder", &gamelift.CreateGameSessionQueueInput{PriorityConfiguration: &types.PriorityConfiguration{
					PriorityOrder: []types.PriorityType{types.PriorityTypeLocation}}}, "InvalidRequestException"},
				{"repeated criterion", &gamelift.CreateGameSessionQueueInput{PriorityConfiguration: &types.PriorityConfiguration{
					PriorityOrder: []types.PriorityType{types.PriorityTypeCost, types.PriorityTypeCost}}}, "InvalidRequestException"},
				{"policy without a limit", &gamelift.CreateGameSessionQueueInput{PlayerLatencyPolicies: []types.PlayerLatencyPolicy{{PolicyDurationSeconds: aws.Int32(5)}}}, "InvalidRequestException"},
				{"target neither SNS nor http", &gamelift.CreateGameSessionQueueInput{NotificationTarget: aws.String("ftp://x/y")}, "InvalidRequestException"},
				{"target URL with credentials", &gamelift.CreateGameSessionQueueInput{NotificationTarget: aws.String("https://u:p@x/y")}, "InvalidRequestException"},
			} {
				tc.in.Name = aws.String("bad")
				if _, err := gl.CreateGameSessionQueue(ctx, tc.in); errCode(err) != tc.code {
					t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
				}
			}
			list, err := gl.DescribeGameSessionQueues(ctx, &gamelift.DescribeGameSessionQueuesInput{})
			if err != nil || len(list.GameSessionQueues) != 0 {
				t.Fatalf("queues after bad input: %+v %v", list, err)
			}
			if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("plain"), Destinations: queueDest(aws.ToString(f.FleetId))}); err != nil {
				t.Fatal(err)
			}
			lat := func(ms float32) []types.PlayerLatency {
				return []types.PlayerLatency{{PlayerId: aws.String("p"), RegionIdentifier: aws.String("custom-a"), LatencyInMilliseconds: aws.Float32(ms)}}
			}
			override := &types.PriorityConfigurationOverride{LocationOrder: []string{"custom-a"}}
			for _, tc := range []struct {
				name string
				in   *gamelift.StartGameSessionPlacementInput
				code string
			}{
				{"unknown queue", &gamelift.StartGameSessionPlacementInput{GameSessionQueueName: aws.String("nope")}, "NotFoundException"},
				{"override with latencies", &gamelift.StartGameSessionPlacementInput{PlayerLatencies: lat(10), PriorityConfigurationOverride: override}, "InvalidRequestException"},
				{"override on a queue without LOCATION", &gamelift.StartGameSessionPlacementInput{PriorityConfigurationOverride: override}, "InvalidRequestException"},
				{"negative latency", &gamelift.StartGameSessionPlacementInput{PlayerLatencies: lat(-1)}, "InvalidRequestException"},
				{"latency without a player", &gamelift.StartGameSessionPlacementInput{PlayerLatencies: []types.PlayerLatency{{RegionIdentifier: aws.String("custom-a"), LatencyInMilliseconds: aws.Float32(5)}}}, "InvalidRequestException"},
				{"more players than seats", &gamelift.StartGameSessionPlacementInput{MaximumPlayerSessionCount: aws.Int32(1),
					DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("a")}, {PlayerId: aws.String("b")}}}, "InvalidRequestException"},
			} {
				tc.in.PlacementId = aws.String("bad-1")
				if tc.in.GameSessionQueueName == nil {
					tc.in.GameSessionQueueName = aws.String("plain")
				}
				if tc.in.MaximumPlayerSessionCount == nil {
					tc.in.MaximumPlayerSessionCount = aws.Int32(4)
				}
				_, err := gl.StartGameSessionPlacement(ctx, tc.in)
				if errCode(err) != tc.code {
					t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
				}
			}
			_, err = gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("bad-1")})
			if errCode(err) != "NotFoundException" {
				t.Errorf("placement after bad input: %v", err)
			}
			_, err = gl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("bad-1")})
			if errCode(err) != "NotFoundException" {
				t.Errorf("stop unknown: %v", err)
			}
		})
	}
}

func TestPlacementOverJSON(t *testing.T) {
	env := apitest.Start(t)
	gl := env.Client()
	ctx := context.Background()
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-a")}); err != nil {
		t.Fatal(err)
	}
	f := createAnywhereFleet(t, gl, anywhereFleet("f", "custom-a"))
	r := env.CallJSON(t, "CreateGameSessionQueue", map[string]any{"Name": "json", "Destinations": []any{map[string]any{"DestinationArn": aws.ToString(f.FleetArn)}},
		"NotificationTarget": "arn:aws:sns:us-west-2:123456789012:topic.fifo"})
	if r.Status != 200 {
		t.Fatalf("CreateGameSessionQueue: %d %s", r.Status, r.Body)
	}
	r = env.CallJSON(t, "StartGameSessionPlacement", `{"PlacementId":"j-1","GameSessionQueueName":"json","MaximumPlayerSessionCount":2,
		"PlayerLatencies":[{"PlayerId":"p","RegionIdentifier":"custom-a","LatencyInMilliseconds":12.5}]}`)
	if r.Status != 200 {
		t.Fatalf("StartGameSessionPlacement: %d %s", r.Status, r.Body)
	}
	pl, _ := r.JSON(t)["GameSessionPlacement"].(map[string]any)
	if pl["Status"] != "PENDING" || pl["PlacementId"] != "j-1" || pl["GameSessionQueueName"] != "json" {
		t.Errorf("placement %v", pl)
	}
	if _, ok := pl["StartTime"].(float64); !ok {
		t.Errorf("StartTime %#v, want epoch seconds", pl["StartTime"])
	}
	lats, _ := pl["PlayerLatencies"].([]any)
	if len(lats) != 1 || lats[0].(map[string]any)["LatencyInMilliseconds"] != 12.5 {
		t.Errorf("latencies %v", pl["PlayerLatencies"])
	}
	r = env.CallJSON(t, "StopGameSessionPlacement", `{"PlacementId":"j-1"}`)
	if pl, _ := r.JSON(t)["GameSessionPlacement"].(map[string]any); r.Status != 200 || pl["Status"] != "CANCELLED" {
		t.Errorf("stop: %d %s", r.Status, r.Body)
	}
	r = env.CallJSON(t, "DescribeGameSessionPlacement", `{"PlacementId":"nope"}`)
	if r.Status != 400 || !strings.HasSuffix(r.ErrorType(t), "NotFoundException") {
		t.Errorf("unknown: %d %s", r.Status, r.Body)
	}
	r = env.CallJSON(t, "StartGameSessionPlacement", `{"PlacementId":"j-2","GameSessionQueueName":"json","MaximumPlayerSessionCount":2,
		"PlayerLatencies":[{"PlayerId":"p","RegionIdentifier":"custom-a","LatencyInMilliseconds":1}],"PriorityConfigurationOverride":{"LocationOrder":["custom-a"]}}`)
	if r.Status != 400 || !strings.HasSuffix(r.ErrorType(t), "InvalidRequestException") {
		t.Errorf("override with latencies: %d %s", r.Status, r.Body)
	}
}
