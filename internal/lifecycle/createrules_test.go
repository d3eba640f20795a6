package lifecycle_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

func TestCreateGameSessionThroughAlias(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		p := h.dial("host-1", "proc-1", h.compute("host-1", "10.0.0.5"))
		p.ready(7777)
		simple, err := h.gl.CreateAlias(t.Context(), &gamelift.CreateAliasInput{Name: aws.String("live"),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(h.fleet)}})
		if err != nil {
			t.Fatal(err)
		}
		terminal, err := h.gl.CreateAlias(t.Context(), &gamelift.CreateAliasInput{Name: aws.String("closed"),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("Season over")}})
		if err != nil {
			t.Fatal(err)
		}

		_, err = h.create(&gamelift.CreateGameSessionInput{AliasId: terminal.Alias.AliasId})
		wantAPIError(t, err, "TerminalRoutingStrategyException")
		if !strings.Contains(err.Error(), "Season over") {
			t.Errorf("TerminalRoutingStrategyException without the alias message: %v", err)
		}
		p.noPush()

		gs := h.mustCreate(&gamelift.CreateGameSessionInput{AliasId: simple.Alias.AliasArn})
		if aws.ToString(gs.FleetId) != h.fleet {
			t.Errorf("FleetId = %s, want %s", aws.ToString(gs.FleetId), h.fleet)
		}
		if m := p.push("CreateGameSession"); m["GameSessionId"] != aws.ToString(gs.GameSessionId) {
			t.Errorf("pushed %v for %s", m["GameSessionId"], aws.ToString(gs.GameSessionId))
		}
	})
}

func TestCreateGameSessionLocation(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		p1, p2 := h.dial("host-1", "proc-1", tok), h.dial("host-1", "proc-2", tok)
		p1.ready(7777)
		p2.ready(7778)
		if _, err := h.gl.CreateLocation(t.Context(), &gamelift.CreateLocationInput{LocationName: aws.String("custom-elsewhere")}); err != nil {
			t.Fatal(err)
		}
		for _, loc := range []string{"custom-elsewhere", "custom-nowhere", "us-west-2"} {
			_, err := h.create(&gamelift.CreateGameSessionInput{Location: aws.String(loc)})
			if code := apiErrorCode(err); code != "InvalidRequestException" && code != "NotFoundException" {
				t.Errorf("Location %s: %v, want InvalidRequestException", loc, err)
			}
		}
		p1.noPush()
		p2.noPush()

		// The fleet has one location: a session that names none goes there
		// (GameLift refuses it on Anywhere fleets; Anylift chooses).
		out, err := h.gl.CreateGameSession(t.Context(), &gamelift.CreateGameSessionInput{FleetId: aws.String(h.fleet),
			MaximumPlayerSessionCount: aws.Int32(2)})
		if err != nil {
			t.Fatalf("CreateGameSession without Location on a one-location fleet: %v", err)
		}
		if gs := out.GameSession; aws.ToString(gs.Location) != testLocation ||
			!strings.Contains(aws.ToString(gs.GameSessionId), "/"+testLocation+"/") {
			t.Errorf("placed in %q as %s, want %s", aws.ToString(gs.Location), aws.ToString(gs.GameSessionId), testLocation)
		}

		// The O3DE gem's request, byte for byte, signed by hand.
		body := `{"FleetId":"` + h.fleet + `","MaximumPlayerSessionCount":2,"IdempotencyToken":"5f0c8e34-7a51-4bde-9d43-2b1e6c0a9f17"}`
		r := h.env.CallJSON(t, "CreateGameSession", body)
		gs, _ := r.JSON(t)["GameSession"].(map[string]any)
		if r.Status != 200 || gs["Location"] != testLocation || gs["Status"] != "ACTIVATING" {
			t.Fatalf("O3DE CreateGameSession: %d %s", r.Status, r.Body)
		}
		if _, has := gs["ComputeName"]; has {
			t.Errorf("the answer names the compute: %s", r.Body)
		}
		// Both processes got one session each.
		for _, p := range []*rawProc{p1, p2} {
			p.push("CreateGameSession")
		}
		// The same token again answers the same session and pushes nothing.
		again := h.env.CallJSON(t, "CreateGameSession", body)
		if g2, _ := again.JSON(t)["GameSession"].(map[string]any); again.Status != 200 || g2["GameSessionId"] != gs["GameSessionId"] {
			t.Errorf("replay: %d %s", again.Status, again.Body)
		}
		p1.noPush()
		p2.noPush()

		// With two locations the choice would be a guess: GameLift's error.
		two, err := h.gl.CreateFleet(t.Context(), &gamelift.CreateFleetInput{Name: aws.String("two"), ComputeType: types.ComputeTypeAnywhere,
			Locations: []types.LocationConfiguration{{Location: aws.String(testLocation)}, {Location: aws.String("custom-elsewhere")}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.gl.CreateGameSession(t.Context(), &gamelift.CreateGameSessionInput{FleetId: two.FleetAttributes.FleetId,
			MaximumPlayerSessionCount: aws.Int32(2)})
		wantAPIError(t, err, "InvalidRequestException")
		if !strings.Contains(err.Error(), "Location is required for a game session on Anywhere fleet") {
			t.Errorf("message: %v", err)
		}
	})
}

func TestCreateGameSessionIdempotencyReplayPushesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		p1, p2 := h.dial("host-1", "proc-1", tok), h.dial("host-1", "proc-2", tok)
		p1.ready(7777)
		p2.ready(7778)
		in := func() *gamelift.CreateGameSessionInput {
			return &gamelift.CreateGameSessionInput{IdempotencyToken: aws.String("match-0001"), Name: aws.String("m")}
		}
		gs := h.mustCreate(in())
		if !strings.HasSuffix(aws.ToString(gs.GameSessionId), "/match-0001") {
			t.Errorf("GameSessionId %s does not end in the idempotency token", aws.ToString(gs.GameSessionId))
		}
		p1.push("CreateGameSession")
		again := h.mustCreate(in())
		if aws.ToString(again.GameSessionId) != aws.ToString(gs.GameSessionId) {
			t.Errorf("replay created %s, want %s", aws.ToString(again.GameSessionId), aws.ToString(gs.GameSessionId))
		}
		p1.noPush()
		p2.noPush()
		// proc-2 is still free.
		h.mustCreate(nil)
		p2.push("CreateGameSession")
	})
}

func TestCreateGameSessionCreatorLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		for _, pid := range []string{"p1", "p2", "p3"} {
			h.dial("host-1", pid, tok).ready(7000)
		}
		_, err := h.gl.UpdateFleetAttributes(t.Context(), &gamelift.UpdateFleetAttributesInput{FleetId: aws.String(h.fleet),
			ResourceCreationLimitPolicy: &types.ResourceCreationLimitPolicy{NewGameSessionsPerCreator: aws.Int32(1), PolicyPeriodInMinutes: aws.Int32(10)}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.create(nil)
		wantAPIError(t, err, "InvalidRequestException") // the policy needs a CreatorId
		h.mustCreate(&gamelift.CreateGameSessionInput{CreatorId: aws.String("player-1")})
		_, err = h.create(&gamelift.CreateGameSessionInput{CreatorId: aws.String("player-1")})
		wantAPIError(t, err, "LimitExceededException")
		h.mustCreate(&gamelift.CreateGameSessionInput{CreatorId: aws.String("player-2")})
		h.clock.Add(10*60e9 + 1e6)
		h.mustCreate(&gamelift.CreateGameSessionInput{CreatorId: aws.String("player-1")})
	})
}
