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
		p := h.dial("host-1", "proc-1", h.compute("host-1", "10.0.0.5"))
		p.ready(7777)
		if _, err := h.gl.CreateLocation(t.Context(), &gamelift.CreateLocationInput{LocationName: aws.String("custom-elsewhere")}); err != nil {
			t.Fatal(err)
		}
		_, err := h.gl.CreateGameSession(t.Context(), &gamelift.CreateGameSessionInput{FleetId: aws.String(h.fleet),
			MaximumPlayerSessionCount: aws.Int32(2)})
		wantAPIError(t, err, "InvalidRequestException") // an Anywhere fleet needs a Location
		if !strings.Contains(err.Error(), "Location") {
			t.Errorf("message does not name Location: %v", err)
		}
		for _, loc := range []string{"custom-elsewhere", "custom-nowhere", "us-west-2"} {
			_, err = h.create(&gamelift.CreateGameSessionInput{Location: aws.String(loc)})
			if code := apiErrorCode(err); code != "InvalidRequestException" && code != "NotFoundException" {
				t.Errorf("Location %s: %v, want InvalidRequestException", loc, err)
			}
		}
		p.noPush()
		h.mustCreate(&gamelift.CreateGameSessionInput{Location: aws.String(testLocation)})
		p.push("CreateGameSession")
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
