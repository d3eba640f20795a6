package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestDescribeGameSessions(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			base := time.Now()
			var ids []string
			for i := 0; i < 5; i++ {
				status := game.SessionActive
				if i == 4 {
					status = game.SessionTerminated
				}
				ids = append(ids, seedSession(t, env, fmt.Sprintf("gsess-%d", i), status, 4, base.Add(time.Duration(i)*time.Millisecond)))
			}
			gl := env.Client()
			ctx := context.Background()
			var got []string
			tokens := map[string]bool{}
			p := gamelift.NewDescribeGameSessionsPaginator(gl, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(seedFleetID), Limit: aws.Int32(2)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tok := aws.ToString(page.NextToken); tok != "" {
					if tokens[tok] {
						t.Fatalf("token %q repeated", tok)
					}
					tokens[tok] = true
				}
				for _, s := range page.GameSessions {
					got = append(got, aws.ToString(s.GameSessionId))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(ids) {
				t.Errorf("paged = %v, want %v", got, ids)
			}
			out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(seedFleetID), StatusFilter: aws.String("TERMINATED"), Location: aws.String(seedLoc)})
			if err != nil || len(out.GameSessions) != 1 || aws.ToString(out.GameSessions[0].GameSessionId) != ids[4] {
				t.Errorf("TERMINATED filter: %+v %v", out, err)
			}
			out, err = gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(ids[2])})
			if err != nil || len(out.GameSessions) != 1 {
				t.Fatalf("by id: %+v %v", out, err)
			}
			s := out.GameSessions[0]
			if aws.ToString(s.IpAddress) != "192.0.2.10" || aws.ToInt32(s.Port) != 7777 || s.Status != types.GameSessionStatusActive ||
				len(s.GameProperties) != 1 || aws.ToString(s.Location) != seedLoc || aws.ToString(s.FleetId) != seedFleetID {
				t.Errorf("session = %+v", s)
			}
			_, err = gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(seedFleetID), StatusFilter: aws.String("ERROR")})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Errorf("StatusFilter ERROR: %v, want InvalidRequestException", err)
			}
			_, err = gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String("fleet-00000000-0000-0000-0000-000000000000")})
			var nf *types.NotFoundException
			if !errors.As(err, &nf) {
				t.Errorf("unknown fleet: %v, want NotFoundException", err)
			}
			err = env.Server.Store().Update(ctx, func(tx store.Tx) error {
				return tx.InsertAlias(&game.Alias{ID: "alias-term", ARN: "arn:alias-term", Name: "t", RoutingType: game.RoutingTerminal, Message: "closed for maintenance"})
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{AliasId: aws.String("alias-term")})
			var term *types.TerminalRoutingStrategyException
			if !errors.As(err, &term) || term.ErrorMessage() != "closed for maintenance" {
				t.Errorf("terminal alias: %v", err)
			}
			det, err := gl.DescribeGameSessionDetails(ctx, &gamelift.DescribeGameSessionDetailsInput{FleetId: aws.String(seedFleetID), Limit: aws.Int32(1)})
			if err != nil || len(det.GameSessionDetails) != 1 || det.GameSessionDetails[0].ProtectionPolicy != types.ProtectionPolicyNoProtection || det.NextToken == nil {
				t.Errorf("details: %+v %v", det, err)
			}
		})
	}
}

func TestDescribeGameSessionsJSON(t *testing.T) {
	env := apitest.Start(t)
	seedFleetAndLocation(t, env)
	r := env.CallJSON(t, "DescribeGameSessions", `{"FleetId": "`+seedFleetID+`"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if list, ok := r.JSON(t)["GameSessions"].([]any); !ok || len(list) != 0 {
		t.Errorf("empty fleet: %s, want GameSessions: []", r.Body)
	}
	id := seedSession(t, env, "gsess-json", game.SessionActive, 4, time.Now())
	r = env.CallJSON(t, "DescribeGameSessionDetails", map[string]any{"GameSessionId": id})
	list, _ := r.JSON(t)["GameSessionDetails"].([]any)
	if len(list) != 1 {
		t.Fatalf("details: %s", r.Body)
	}
	r = env.CallJSON(t, "DescribeGameSessions", `{}`)
	if r.ErrorType(t) != "InvalidRequestException" {
		t.Errorf("no selector: %s", r.Body)
	}
}

func TestUpdateGameSession(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-u", game.SessionActive, 4, time.Now())
			ended := seedSession(t, env, "gsess-ended", game.SessionTerminated, 4, time.Now())
			gl := env.Client()
			ctx := context.Background()
			out, err := gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{
				GameSessionId: aws.String(id), Name: aws.String("renamed"), MaximumPlayerSessionCount: aws.Int32(10),
				PlayerSessionCreationPolicy: types.PlayerSessionCreationPolicyDenyAll, ProtectionPolicy: types.ProtectionPolicyFullProtection,
				GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("dm")}, {Key: aws.String("map"), Value: aws.String("x")}},
			})
			if err != nil {
				t.Fatal(err)
			}
			s := out.GameSession
			if aws.ToString(s.Name) != "renamed" || aws.ToInt32(s.MaximumPlayerSessionCount) != 10 || s.PlayerSessionCreationPolicy != types.PlayerSessionCreationPolicyDenyAll {
				t.Errorf("updated = %+v", s)
			}
			props := map[string]string{}
			for _, p := range s.GameProperties {
				props[aws.ToString(p.Key)] = aws.ToString(p.Value)
			}
			if len(props) != 2 || props["mode"] != "dm" || props["map"] != "x" {
				t.Errorf("merged properties = %v", props)
			}
			// Properties are never deleted by an update: an empty list keeps them.
			out, err = gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id), GameProperties: []types.GameProperty{}})
			if err != nil || len(out.GameSession.GameProperties) != 2 {
				t.Errorf("empty update: %+v %v", out, err)
			}
			det, err := gl.DescribeGameSessionDetails(ctx, &gamelift.DescribeGameSessionDetailsInput{GameSessionId: aws.String(id)})
			if err != nil || det.GameSessionDetails[0].ProtectionPolicy != types.ProtectionPolicyFullProtection {
				t.Errorf("protection: %+v %v", det, err)
			}
			var many []types.GameProperty
			for i := 0; i < 15; i++ {
				many = append(many, types.GameProperty{Key: aws.String(fmt.Sprintf("k%d", i)), Value: aws.String("v")})
			}
			_, err = gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id), GameProperties: many})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Errorf("17 merged properties: %v, want InvalidRequestException", err)
			}
			_, err = gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id), MaximumPlayerSessionCount: aws.Int32(201)})
			if !errors.As(err, &invalid) {
				t.Errorf("201 seats: %v, want InvalidRequestException", err)
			}
			_, err = gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(ended), Name: aws.String("x")})
			var status *types.InvalidGameSessionStatusException
			if !errors.As(err, &status) {
				t.Errorf("terminated session: %v, want InvalidGameSessionStatusException", err)
			}
			_, err = gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id + "x")})
			var nf *types.NotFoundException
			if !errors.As(err, &nf) {
				t.Errorf("unknown session: %v, want NotFoundException", err)
			}
		})
	}
}

func TestTerminateGameSession(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-t", game.SessionActive, 4, time.Now())
			gl := env.Client()
			ctx := context.Background()
			if _, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("p1")}); err != nil {
				t.Fatal(err)
			}
			_, err := gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id), TerminationMode: types.TerminationModeForceTerminate})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Errorf("FORCE_TERMINATE: %v, want InvalidRequestException", err)
			}
			out, err := gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id), TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
			if err != nil {
				t.Fatal(err)
			}
			if out.GameSession.Status != types.GameSessionStatusTerminating || out.GameSession.StatusReason != types.GameSessionStatusReasonTriggeredOnProcessTerminate {
				t.Errorf("terminate = %+v", out.GameSession)
			}
			_, err = gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id), TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
			var status *types.InvalidGameSessionStatusException
			if !errors.As(err, &status) {
				t.Errorf("terminating twice: %v, want InvalidGameSessionStatusException", err)
			}
			if err := env.Server.Processes().EndGameSession(ctx, id, game.SessionTerminated, ""); err != nil {
				t.Fatal(err)
			}
			d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
			if err != nil {
				t.Fatal(err)
			}
			s := d.GameSessions[0]
			if s.Status != types.GameSessionStatusTerminated || s.TerminationTime == nil || aws.ToInt32(s.CurrentPlayerSessionCount) != 0 ||
				s.StatusReason != types.GameSessionStatusReasonTriggeredOnProcessTerminate {
				t.Errorf("ended = %+v", s)
			}
			ps, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id)})
			if err != nil || len(ps.PlayerSessions) != 1 || ps.PlayerSessions[0].Status != types.PlayerSessionStatusCompleted {
				t.Errorf("player sessions after end: %+v %v", ps, err)
			}
			errID := seedSession(t, env, "gsess-err", game.SessionError, 4, time.Now())
			_, err = gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(errID), TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
			if !errors.As(err, &status) {
				t.Errorf("ERROR session: %v, want InvalidGameSessionStatusException", err)
			}
		})
	}
}
