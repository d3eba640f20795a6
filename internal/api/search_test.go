package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

const searchFleet = "fleet-5eac4c11-0000-4000-8000-000000000001"

// seedSearchFleet stores a fleet in custom-s, a SIMPLE and a TERMINAL
// alias, and 25 ACTIVE sessions: even ones have mode=ffa; session i holds
// i%5 of 4 players.
func seedSearchFleet(t *testing.T, env *apitest.Env) {
	t.Helper()
	acct := game.Account{Region: apitest.Region, ID: "123456789012"}
	epoch := time.UnixMilli(1767225600000).UTC()
	err := env.Server.Store().Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertLocation(&game.Location{Name: "custom-s", ARN: acct.LocationARN("custom-s"), CreationTime: epoch}); err != nil {
			return err
		}
		f := &game.Fleet{ID: searchFleet, ARN: acct.FleetARN(searchFleet), Name: "search", Status: "ACTIVE",
			CreationTime: epoch, ComputeType: "ANYWHERE", Locations: []string{"custom-s"}}
		if err := tx.InsertFleet(f); err != nil {
			return err
		}
		for _, a := range []*game.Alias{
			{ID: "alias-simple-1", ARN: acct.AliasARN("alias-simple-1"), Name: "s", RoutingType: game.RoutingSimple, FleetID: searchFleet, CreationTime: epoch},
			{ID: "alias-term-1", ARN: acct.AliasARN("alias-term-1"), Name: "t", RoutingType: game.RoutingTerminal, Message: "gone fishing", CreationTime: epoch},
		} {
			if err := tx.InsertAlias(a); err != nil {
				return err
			}
		}
		for i := range 25 {
			id := fmt.Sprintf("gsess-%02d", i)
			s := &game.GameSession{ID: acct.GameSessionARN(searchFleet, "custom-s", id), IDString: id, Name: id,
				FleetID: searchFleet, FleetARN: f.ARN, Location: "custom-s", Status: game.SessionActive,
				CreationTime: epoch.Add(time.Duration(i) * time.Second), MaximumPlayerSessionCount: 4,
				CurrentPlayerSessionCount: i % 5, PlayerSessionCreationPolicy: "ACCEPT_ALL"}
			if i%2 == 0 {
				s.Properties = []game.Property{{Key: "mode", Value: "ffa"}}
			}
			if err := tx.InsertGameSession(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSearchGameSessionsWithGoSDK(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedSearchFleet(t, env)
			gl := env.Client()
			ctx := context.Background()
			// Even sessions with fewer than 4 players: 0, 2, 6, 8, 10, 12, 16, 18, 20, 22.
			// By players descending, ties newest first.
			want := "gsess-18 gsess-08 gsess-22 gsess-12 gsess-02 gsess-16 gsess-06 gsess-20 gsess-10 gsess-00"
			for _, in := range []*gamelift.SearchGameSessionsInput{
				{FleetId: aws.String(searchFleet)},
				{AliasId: aws.String("alias-simple-1")},
				{FleetId: aws.String("arn:aws:gamelift:us-west-2:123456789012:fleet/" + searchFleet), Location: aws.String("custom-s")},
			} {
				in.FilterExpression = aws.String(`gameSessionProperties.mode = 'ffa' AND hasAvailablePlayerSessions = true`)
				in.SortExpression = aws.String("playerSessionCount DESC")
				in.Limit = aws.Int32(3)
				var got []string
				p := gamelift.NewSearchGameSessionsPaginator(gl, in)
				for p.HasMorePages() {
					page, err := p.NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if len(page.GameSessions) > 3 {
						t.Fatalf("page of %d, limit 3", len(page.GameSessions))
					}
					for _, s := range page.GameSessions {
						got = append(got, aws.ToString(s.Name))
					}
				}
				if strings.Join(got, " ") != want {
					t.Errorf("search %+v:\n got %v\nwant %v", in, got, want)
				}
			}
			out, err := gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String(searchFleet), Limit: aws.Int32(100)})
			if err != nil || len(out.GameSessions) != 20 || out.NextToken == nil {
				t.Fatalf("Limit 100: %d sessions, token %v, %v; want 20 and a token", len(out.GameSessions), out.NextToken, err)
			}
			gs := out.GameSessions[0]
			if aws.ToString(gs.Name) != "gsess-00" || gs.Status != types.GameSessionStatusActive || aws.ToString(gs.Location) != "custom-s" ||
				len(gs.GameProperties) != 1 || aws.ToInt32(gs.MaximumPlayerSessionCount) != 4 || gs.CreationTime == nil {
				t.Errorf("first session %+v", gs)
			}
			checkSearchErrors(t, gl)
		})
	}
}

func checkSearchErrors(t *testing.T, gl *gamelift.Client) {
	ctx := context.Background()
	_, err := gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{AliasId: aws.String("alias-term-1")})
	var term *types.TerminalRoutingStrategyException
	if !errors.As(err, &term) || term.ErrorMessage() != "gone fishing" {
		t.Errorf("terminal alias: %v", err)
	}
	var invalid *types.InvalidRequestException
	for _, in := range []*gamelift.SearchGameSessionsInput{
		{FleetId: aws.String(searchFleet), AliasId: aws.String("alias-simple-1")},
		{},
		{FleetId: aws.String(searchFleet), FilterExpression: aws.String("maximumSessions = 'four'")},
		{FleetId: aws.String(searchFleet), SortExpression: aws.String("maximumSessions UP")},
		{FleetId: aws.String(searchFleet), NextToken: aws.String("bm90IGEgdG9rZW4")},
	} {
		if _, err := gl.SearchGameSessions(ctx, in); !errors.As(err, &invalid) || invalid.ErrorMessage() == "" {
			t.Errorf("%+v: %v, want InvalidRequestException with a message", in, err)
		}
	}
	_, err = gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String("fleet-nope")})
	var nf *types.NotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("unknown fleet: %v", err)
	}
}

func TestSearchGameSessionsWithJSON(t *testing.T) {
	env := apitest.Start(t, func(c *server.Config) { c.SearchPageSize = 100 })
	seedSearchFleet(t, env)
	r := env.CallJSON(t, "SearchGameSessions", `{"FleetId": "`+searchFleet+`", "Limit": 50,
		"FilterExpression": "creationTimeMillis>=1767225610000 AND NOT gameSessionProperties.mode=\"ffa\""}`)
	m := r.JSON(t)
	list, _ := m["GameSessions"].([]any)
	if r.Status != http.StatusOK || len(list) != 7 || m["NextToken"] != nil {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	first := list[0].(map[string]any)
	if first["Name"] != "gsess-11" || first["GameProperties"] == nil {
		t.Errorf("first = %v", first)
	}
	if _, ok := first["CreationTime"].(float64); !ok {
		t.Errorf("CreationTime = %v, want epoch seconds", first["CreationTime"])
	}
	r = env.CallJSON(t, "SearchGameSessions", `{"FleetId": "`+searchFleet+`", "Limit": 50}`)
	if list, _ := r.JSON(t)["GameSessions"].([]any); len(list) != 25 || r.JSON(t)["NextToken"] != nil {
		t.Errorf("with --search-page-size 100, Limit 50: %d sessions, want all 25 in one page", len(list))
	}
	r = env.CallJSON(t, "SearchGameSessions", `{"FleetId": "`+searchFleet+`", "FilterExpression": "gameSessionName = 'none'"}`)
	if list, ok := r.JSON(t)["GameSessions"].([]any); !ok || len(list) != 0 {
		t.Errorf("no match: %s, want an empty GameSessions list", r.Body)
	}
	r = env.CallJSON(t, "SearchGameSessions", `{"FleetId": "`+searchFleet+`", "FilterExpression": "(maximumSessions = 4"}`)
	msg, _ := r.JSON(t)["message"].(string)
	if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" || !strings.Contains(msg, "position 1") {
		t.Errorf("unbalanced: %d %s", r.Status, r.Body)
	}
	r = env.CallJSON(t, "SearchGameSessions", `{"FleetId": "`+searchFleet+`", "FilterExpression": ""}`)
	if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" {
		t.Errorf("empty filter: %d %s", r.Status, r.Body)
	}
}
