package lifecycle_test

import (
	"context"
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
	"github.com/anylift/anylift/internal/storetestenv"
)

func dest(ids ...string) []types.GameSessionQueueDestination {
	var out []types.GameSessionQueueDestination
	for _, id := range ids {
		out = append(out, types.GameSessionQueueDestination{DestinationArn: aws.String(id)})
	}
	return out
}

func TestPlacementFulfilledOnlyOnceActive(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")
		q := h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("main"), Destinations: dest(h.fleet),
			NotificationTarget: aws.String("https://hooks.example.com/gamelift"), CustomEventData: aws.String("tag-1")})
		if !strings.HasSuffix(aws.ToString(q.GameSessionQueueArn), ":123456789012:gamesessionqueue/main") || aws.ToInt32(q.TimeoutInSeconds) != 600 {
			t.Errorf("queue %+v", q)
		}
		start := h.clock.Now()
		pl := h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("pl-1"), GameSessionQueueName: q.GameSessionQueueArn,
			GameSessionName: aws.String("duel"), GameSessionData: aws.String("data"),
			GameProperties:        []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ctf")}},
			DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("alice"), PlayerData: aws.String("red")}, {PlayerId: aws.String("bob")}}})
		if pl.Status != types.GameSessionPlacementStatePending || !aws.ToTime(pl.StartTime).Equal(start) || aws.ToString(pl.GameSessionQueueName) != "main" {
			t.Fatalf("started %+v", pl)
		}
		m := p.push("CreateGameSession")
		if m["GameSessionName"] != "duel" || m["GameSessionData"] != "data" {
			t.Errorf("push %v", m)
		}
		// Placed, not yet active: still PENDING, with provisional ids.
		pending := h.placement("pl-1")
		if pending.Status != types.GameSessionPlacementStatePending || aws.ToString(pending.GameSessionArn) != m["GameSessionId"] || len(pending.PlacedPlayerSessions) != 0 {
			t.Fatalf("before activation %+v", pending)
		}
		if _, err := h.gl.StopGameSessionPlacement(t.Context(), &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-1")}); apiErrorCode(err) != "InvalidRequestException" {
			t.Errorf("stop after a session was created: %v", err)
		}
		h.clock.Add(1500 * time.Millisecond)
		p.ok("ActivateGameSession", map[string]any{"GameSessionId": m["GameSessionId"]})
		got := h.placement("pl-1")
		if got.Status != types.GameSessionPlacementStateFulfilled || aws.ToString(got.IpAddress) != "10.0.0.5" || aws.ToInt32(got.Port) != 7000 ||
			aws.ToString(got.GameSessionRegion) != testLocation || aws.ToString(got.GameSessionId) != m["GameSessionId"] ||
			!aws.ToTime(got.EndTime).Equal(start.Add(1500*time.Millisecond)) || len(got.PlacedPlayerSessions) != 2 {
			t.Fatalf("fulfilled %+v", got)
		}
		for i, who := range []string{"alice", "bob"} {
			ps := got.PlacedPlayerSessions[i]
			if aws.ToString(ps.PlayerId) != who || h.playerStatus(aws.ToString(ps.PlayerSessionId)) != types.PlayerSessionStatusReserved {
				t.Errorf("placed %d: %+v", i, ps)
			}
		}
		// A PlacementId used again answers the placement as it is now.
		again := h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("pl-1"), GameSessionQueueName: aws.String("main"),
			MaximumPlayerSessionCount: aws.Int32(9)})
		if again.Status != types.GameSessionPlacementStateFulfilled || aws.ToInt32(again.MaximumPlayerSessionCount) != 4 {
			t.Errorf("replay %+v", again)
		}
		// Even when the call itself could not start a placement.
		again = h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("pl-1"), GameSessionQueueName: aws.String("no-such-queue"),
			MaximumPlayerSessionCount: aws.Int32(9)})
		if again.Status != types.GameSessionPlacementStateFulfilled || aws.ToString(again.GameSessionQueueName) != "main" {
			t.Errorf("replay on another queue %+v", again)
		}
		p.noPush()
		if _, err := h.gl.StopGameSessionPlacement(t.Context(), &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-1")}); apiErrorCode(err) != "InvalidRequestException" {
			t.Errorf("stop after fulfilment: %v", err)
		}
		ns := h.notifications()
		if len(ns) != 1 || ns[0].Type != "PlacementFulfilled" || ns[0].Target != "https://hooks.example.com/gamelift" || ns[0].Resource != aws.ToString(q.GameSessionQueueArn) {
			t.Fatalf("outbox %+v", ns)
		}
		d := detail(t, ns[0])
		placed, _ := d["placedPlayerSessions"].([]any)
		if d["type"] != "PlacementFulfilled" || d["placementId"] != "pl-1" || d["port"] != "7000" || d["ipAddress"] != "10.0.0.5" ||
			d["gameSessionArn"] != m["GameSessionId"] || d["gameSessionRegion"] != testLocation || d["customEventData"] != "tag-1" ||
			d["startTime"] != start.Format("2006-01-02T15:04:05.000Z") || len(placed) != 2 {
			t.Errorf("detail %v", d)
		}
	})
}

func TestPlacementHonoursLatencyPoliciesAcrossFleetsAndLocations(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		a := h.fleetIn("a", "", "custom-a")
		b := h.fleetIn("b", "", "custom-b", "custom-c")
		pa := h.readyProc(a, "custom-a", "ha", "10.0.1.1")
		pb := h.readyProc(b, "custom-b", "hb", "10.0.2.1")
		pc := h.readyProc(b, "custom-c", "hc", "10.0.3.1")
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("lat"), Destinations: dest(a, "arn:aws:gamelift:us-west-2:123456789012:fleet/"+b),
			PlayerLatencyPolicies: []types.PlayerLatencyPolicy{{MaximumIndividualPlayerLatencyMilliseconds: aws.Int32(50), PolicyDurationSeconds: aws.Int32(60)}}})
		lat := []types.PlayerLatency{
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("custom-a"), LatencyInMilliseconds: aws.Float32(120)},
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("custom-b"), LatencyInMilliseconds: aws.Float32(30)},
			{PlayerId: aws.String("p2"), RegionIdentifier: aws.String("custom-b"), LatencyInMilliseconds: aws.Float32(20)},
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("custom-c"), LatencyInMilliseconds: aws.Float32(40)},
		}
		start := func(id string) {
			h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(id), GameSessionQueueName: aws.String("lat"), PlayerLatencies: lat})
		}
		// Lowest average latency first (custom-b), though fleet a is the
		// first destination; then custom-c.
		start("l-1")
		if got := h.placedOn(pb, "l-1"); aws.ToString(got.GameSessionRegion) != "custom-b" {
			t.Errorf("l-1 in %s", aws.ToString(got.GameSessionRegion))
		}
		start("l-2")
		if got := h.placedOn(pc, "l-2"); aws.ToString(got.GameSessionRegion) != "custom-c" {
			t.Errorf("l-2 in %s", aws.ToString(got.GameSessionRegion))
		}
		// Only custom-a is free, over the 50 ms cap: the placement waits
		// until the policy expires, then goes there.
		start("l-3")
		h.advance(59 * time.Second)
		pa.noPush()
		if got := h.placement("l-3"); got.Status != types.GameSessionPlacementStatePending || got.GameSessionArn != nil {
			t.Fatalf("l-3 under the cap: %+v", got)
		}
		h.advance(time.Second)
		if got := h.placedOn(pa, "l-3"); aws.ToString(got.GameSessionRegion) != "custom-a" {
			t.Errorf("l-3 in %s", aws.ToString(got.GameSessionRegion))
		}
	})
}

func TestPlacementPriorityLocationOrderAndOverride(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		b := h.fleetIn("b", "", "custom-b", "custom-c")
		pb := h.readyProc(b, "custom-b", "hb", "10.0.2.1")
		pc := h.readyProc(b, "custom-c", "hc", "10.0.3.1")
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("prio"), Destinations: dest(b),
			PriorityConfiguration: &types.PriorityConfiguration{PriorityOrder: []types.PriorityType{types.PriorityTypeLocation},
				LocationOrder: []string{"custom-c", "custom-b"}}})
		// The override sends the first placement to custom-b, against the
		// queue's location order.
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("o-1"), GameSessionQueueName: aws.String("prio"),
			PriorityConfigurationOverride: &types.PriorityConfigurationOverride{LocationOrder: []string{"custom-b"},
				PlacementFallbackStrategy: types.PlacementFallbackStrategyNone}})
		if got := h.placedOn(pb, "o-1"); aws.ToString(got.GameSessionRegion) != "custom-b" || got.PriorityConfigurationOverride == nil {
			t.Errorf("o-1: %+v", got)
		}
		// NONE: custom-b is full and the placement does not fall back.
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("o-2"), GameSessionQueueName: aws.String("prio"),
			PriorityConfigurationOverride: &types.PriorityConfigurationOverride{LocationOrder: []string{"custom-b"},
				PlacementFallbackStrategy: types.PlacementFallbackStrategyNone}})
		h.sweep()
		pc.noPush()
		// Without an override the queue's order applies: custom-c.
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("o-3"), GameSessionQueueName: aws.String("prio")})
		if got := h.placedOn(pc, "o-3"); aws.ToString(got.GameSessionRegion) != "custom-c" {
			t.Errorf("o-3 in %s", aws.ToString(got.GameSessionRegion))
		}
		if got := h.placement("o-2"); got.Status != types.GameSessionPlacementStatePending {
			t.Errorf("o-2: %s", got.Status)
		}
	})
}

func TestPlacementWaitsForCapacity(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("wait"), Destinations: dest(h.fleet), TimeoutInSeconds: aws.Int32(30)})
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("w-1"), GameSessionQueueName: aws.String("wait")})
		h.advance(10 * time.Second)
		if got := h.placement("w-1"); got.Status != types.GameSessionPlacementStatePending {
			t.Fatalf("without capacity: %s", got.Status)
		}
		// A process becoming ready places it at once, without a sweep.
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")
		h.placedOn(p, "w-1")
	})
}

func TestPlacementTimesOutAndStops(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("short"), Destinations: dest(h.fleet), TimeoutInSeconds: aws.Int32(10),
			NotificationTarget: aws.String("arn:aws:sns:us-west-2:123456789012:placements")})
		start := h.clock.Now()
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("t-1"), GameSessionQueueName: aws.String("short")})
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("s-1"), GameSessionQueueName: aws.String("short")})
		h.advance(9 * time.Second)
		out, err := h.gl.StopGameSessionPlacement(t.Context(), &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("s-1")})
		if err != nil || out.GameSessionPlacement.Status != types.GameSessionPlacementStateCancelled ||
			!aws.ToTime(out.GameSessionPlacement.EndTime).Equal(start.Add(9*time.Second)) {
			t.Fatalf("stop: %+v %v", out, err)
		}
		if _, err := h.gl.StopGameSessionPlacement(t.Context(), &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("s-1")}); apiErrorCode(err) != "InvalidRequestException" {
			t.Errorf("second stop: %v", err)
		}
		if got := h.placement("t-1"); got.Status != types.GameSessionPlacementStatePending {
			t.Fatalf("before the timeout: %s", got.Status)
		}
		h.advance(time.Second)
		got := h.placement("t-1")
		if got.Status != types.GameSessionPlacementStateTimedOut || !aws.ToTime(got.EndTime).Equal(start.Add(10*time.Second)) {
			t.Fatalf("after the timeout: %+v", got)
		}
		// A process arriving later finds nothing to place.
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")
		h.sweep()
		p.noPush()
		ns := h.notifications()
		if len(ns) != 2 || ns[0].Type != "PlacementCancelled" || ns[1].Type != "PlacementTimedOut" || ns[1].Target != "arn:aws:sns:us-west-2:123456789012:placements" {
			t.Fatalf("outbox %+v", ns)
		}
		if d := detail(t, ns[1]); d["placementId"] != "t-1" || d["endTime"] != start.Add(10*time.Second).Format("2006-01-02T15:04:05.000Z") {
			t.Errorf("detail %v", d)
		}
	})
}

func TestPlacementFailsWithItsQueueAndRetriesAFailedActivation(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("gone"), Destinations: dest(h.fleet)})
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("f-1"), GameSessionQueueName: aws.String("gone")})
		if _, err := h.gl.DeleteGameSessionQueue(t.Context(), &gamelift.DeleteGameSessionQueueInput{Name: aws.String("gone")}); err != nil {
			t.Fatal(err)
		}
		if got := h.placement("f-1"); got.Status != types.GameSessionPlacementStateFailed {
			t.Errorf("after the queue was deleted: %s", got.Status)
		}
		// A provisional session whose process is lost before it is active
		// ends in ERROR: the placement is tried again, elsewhere.
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("q2"), Destinations: dest(h.fleet)})
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("f-2"), GameSessionQueueName: aws.String("q2")})
		first := p.push("CreateGameSession")["GameSessionId"]
		p.ok("TerminateServerProcess", nil)
		if got := h.placement("f-2"); got.Status != types.GameSessionPlacementStatePending || got.GameSessionArn != nil {
			t.Fatalf("after the process ended: %+v", got)
		}
		p2 := h.readyProc(h.fleet, testLocation, "host-2", "10.0.0.6")
		if got := h.placedOn(p2, "f-2"); aws.ToString(got.GameSessionArn) == first || aws.ToString(got.IpAddress) != "10.0.0.6" {
			t.Errorf("second attempt %+v", got)
		}
		if ns := h.notifications(); len(ns) != 2 || ns[0].Type != "PlacementFailed" || ns[1].Type != "PlacementFulfilled" {
			t.Errorf("outbox %+v", ns)
		}
	})
}

func TestPlacementsWaitingBehindDoNotBlockPlaceableOnes(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		b := h.fleetIn("b", "", "custom-b", "custom-c")
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("prio"), Destinations: dest(b),
			PriorityConfiguration: &types.PriorityConfiguration{PriorityOrder: []types.PriorityType{types.PriorityTypeLocation},
				LocationOrder: []string{"custom-c", "custom-b"}}})
		// More than one placer batch waits for capacity in custom-b only.
		for i := range 70 {
			h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("blocked-%d", i)), GameSessionQueueName: aws.String("prio"),
				PriorityConfigurationOverride: &types.PriorityConfigurationOverride{LocationOrder: []string{"custom-b"},
					PlacementFallbackStrategy: types.PlacementFallbackStrategyNone}})
		}
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("free"), GameSessionQueueName: aws.String("prio")})
		pc := h.readyProc(b, "custom-c", "hc", "10.0.3.1")
		if got := h.placedOn(pc, "free"); aws.ToString(got.GameSessionRegion) != "custom-c" {
			t.Errorf("free in %s", aws.ToString(got.GameSessionRegion))
		}
	})
}

func TestConcurrentPlacersPlaceEachPlacementOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("many"), Destinations: dest(h.fleet)})
		const n = 6
		for i := range n {
			h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("c-%d", i)), GameSessionQueueName: aws.String("many")})
		}
		for i := range n + 2 {
			h.readyProc(h.fleet, testLocation, fmt.Sprintf("host-%d", i), fmt.Sprintf("10.0.0.%d", i+1))
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.env.Server.Queues().PlacePending(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for i := range n {
			got := h.placement(fmt.Sprintf("c-%d", i))
			id := aws.ToString(got.GameSessionArn)
			if id == "" || seen[id] {
				t.Fatalf("placement c-%d: session %q", i, id)
			}
			seen[id] = true
		}
		out, err := h.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{FleetId: aws.String(h.fleet)})
		if err != nil || len(out.GameSessions) != n {
			t.Fatalf("%d game sessions for %d placements (%v)", len(out.GameSessions), n, err)
		}
	})
}

// A placement that times out while its game session is still ACTIVATING
// does not leave that session running for nobody: it is terminated and its
// process told to end. A session that activates before the sweep notices
// the deadline fulfils its placement.
func TestPlacementTimeoutTerminatesItsActivatingSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("slow"), Destinations: dest(h.fleet), TimeoutInSeconds: aws.Int32(10)})
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("a-1"), GameSessionQueueName: aws.String("slow"),
			DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("alice")}}})
		gsID := p.push("CreateGameSession")["GameSessionId"].(string)
		h.advance(10 * time.Second)
		if got := h.placement("a-1"); got.Status != types.GameSessionPlacementStateTimedOut || len(got.PlacedPlayerSessions) != 0 {
			t.Fatalf("after the timeout: %+v", got)
		}
		if gs := h.session(gsID); gs.Status != types.GameSessionStatusTerminating || gs.StatusReason != types.GameSessionStatusReasonTriggeredOnProcessTerminate {
			t.Fatalf("its session: %s %s", gs.Status, gs.StatusReason)
		}
		p.push("TerminateProcess")
		if a := p.call("ActivateGameSession", map[string]any{"GameSessionId": gsID}); status(a) == 200 {
			t.Fatalf("a late activation was accepted: %v", a)
		}
		p.ok("TerminateServerProcess", nil)
		if gs := h.session(gsID); gs.Status != types.GameSessionStatusTerminated {
			t.Fatalf("after its process ended: %s", gs.Status)
		}
		if got := h.placement("a-1"); got.Status != types.GameSessionPlacementStateTimedOut {
			t.Errorf("the placement changed to %s", got.Status)
		}

		// Activated past the deadline but before the sweep: fulfilled.
		p2 := h.readyProc(h.fleet, testLocation, "host-2", "10.0.0.6")
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("a-2"), GameSessionQueueName: aws.String("slow")})
		gs2 := p2.push("CreateGameSession")["GameSessionId"]
		h.clock.Add(11 * time.Second)
		p2.ok("ActivateGameSession", map[string]any{"GameSessionId": gs2})
		h.sweep()
		if got := h.placement("a-2"); got.Status != types.GameSessionPlacementStateFulfilled {
			t.Fatalf("activated before the sweep: %s", got.Status)
		}
		p2.noPush()
		if ns := h.notifications(); len(ns) != 2 || ns[0].Type != "PlacementTimedOut" || ns[1].Type != "PlacementFulfilled" {
			t.Errorf("outbox %+v", ns)
		}
	})
}

// Two nodes on one PostgreSQL in the shared mode (--fleet-ownership=false),
// each running its placer at once, place every placement exactly once.
// (With fleet ownership, the default, only a fleet's owner places on it:
// internal/multinode's TestQueueOverFleetsOfDifferentNodes.)
func TestTwoNodesPlaceEachPlacementOnce(t *testing.T) {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	// Two nodes of one database, each with the forwarding listener such a
	// node needs (it refuses to start beside another without one), both
	// writing every fleet.
	node := func(c *server.Config) {
		c.NodeListen, c.NodeSecret = "127.0.0.1:0", "lifecycle-node-secret-0123"
		c.FleetOwnership = server.OwnershipOff
	}
	h := newHarness(t, apitest.WithPostgres(storetestenv.FreshSchema(t, dsn)), node)
	other := apitest.Start(t, apitest.WithPostgres(h.env.Config.Store), node, func(c *server.Config) { c.Now = h.clock.Now })
	h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("two"), Destinations: dest(h.fleet)})
	const n = 8
	for i := range n {
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("t-%d", i)), GameSessionQueueName: aws.String("two")})
	}
	for i := range n + 2 {
		h.readyProc(h.fleet, testLocation, fmt.Sprintf("host-%d", i), fmt.Sprintf("10.0.0.%d", i+1))
	}
	var wg sync.WaitGroup
	for _, node := range []*server.Server{h.env.Server, other.Server, h.env.Server, other.Server} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := node.Queues().PlacePending(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		id := aws.ToString(h.placement(fmt.Sprintf("t-%d", i)).GameSessionArn)
		if id == "" || seen[id] {
			t.Fatalf("placement t-%d: session %q", i, id)
		}
		seen[id] = true
	}
	out, err := h.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{FleetId: aws.String(h.fleet)})
	if err != nil || len(out.GameSessions) != n {
		t.Fatalf("%d game sessions for %d placements (%v)", len(out.GameSessions), n, err)
	}
}
