package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
)

func TestCreatePlayerSessions(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-p", game.SessionActive, 3, time.Now())
			gl := env.Client()
			ctx := context.Background()
			one, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("p0"), PlayerData: aws.String("d0")})
			if err != nil {
				t.Fatal(err)
			}
			p := one.PlayerSession
			if p.Status != types.PlayerSessionStatusReserved || aws.ToString(p.IpAddress) != "192.0.2.10" || aws.ToString(p.DnsName) != "host.example" ||
				aws.ToInt32(p.Port) != 7777 || aws.ToString(p.FleetId) != seedFleetID || aws.ToString(p.FleetArn) == "" ||
				aws.ToString(p.PlayerData) != "d0" || len(aws.ToString(p.PlayerSessionId)) != len("psess-")+36 {
				t.Errorf("player session = %+v", p)
			}
			_, err = gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: []string{"p1", "p2", "p3"}})
			var full *types.GameSessionFullException
			if !errors.As(err, &full) {
				t.Fatalf("3 more in 2 free seats: %v, want GameSessionFullException", err)
			}
			many, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: []string{"p1", "p2"},
				PlayerDataMap: map[string]string{"p1": "d1", "stranger": "ignored"}})
			if err != nil || len(many.PlayerSessions) != 2 || aws.ToString(many.PlayerSessions[0].PlayerData) != "d1" || many.PlayerSessions[1].PlayerData != nil {
				t.Fatalf("batch: %+v %v", many, err)
			}
			d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
			if err != nil || aws.ToInt32(d.GameSessions[0].CurrentPlayerSessionCount) != 3 {
				t.Errorf("count: %+v %v", d, err)
			}
			_, err = gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("late")})
			if !errors.As(err, &full) {
				t.Errorf("full session: %v", err)
			}
			_, err = gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: make([]string, 26)})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Errorf("26 players: %v, want InvalidRequestException", err)
			}
			deny := seedSession(t, env, "gsess-deny", game.SessionActive, 3, time.Now())
			if _, err := gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(deny), PlayerSessionCreationPolicy: types.PlayerSessionCreationPolicyDenyAll}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(deny), PlayerId: aws.String("x")})
			var status *types.InvalidGameSessionStatusException
			if !errors.As(err, &status) || !strings.Contains(status.ErrorMessage(), "DENY_ALL") {
				t.Errorf("DENY_ALL: %v, want InvalidGameSessionStatusException naming the policy", err)
			}
			act := seedSession(t, env, "gsess-act", game.SessionActivating, 3, time.Now())
			_, err = gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(act), PlayerId: aws.String("x")})
			if !errors.As(err, &status) {
				t.Errorf("ACTIVATING: %v, want InvalidGameSessionStatusException", err)
			}
			_, err = gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id + "-none"), PlayerId: aws.String("x")})
			var nf *types.NotFoundException
			if !errors.As(err, &nf) {
				t.Errorf("unknown session: %v, want NotFoundException", err)
			}
		})
	}
}

// TestPlayerSessionSeatsUnderConcurrency is the over-booking test: 200
// concurrent CreatePlayerSession calls on one ACTIVE session of 8 seats;
// exactly 8 succeed and the 192 others fail with GameSessionFullException.
// Then singles and batches of two race on a second session of 8 seats:
// exactly its 8 seats are taken. Afterwards the seat count of each session
// and DescribePlayerSessions agree with what was acknowledged.
func TestPlayerSessionSeatsUnderConcurrency(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			const seats = 8
			gl := env.Client()

			single := seedSession(t, env, "gsess-race", game.SessionActive, seats, time.Now())
			r := apitest.RaceSeats(t, []*gamelift.Client{gl}, single, 200, 0)
			if len(r.Acked) != seats || r.Full != 200-seats || len(r.Other) > 0 {
				t.Fatalf("singles: %d reserved, %d full, other errors %v; want %d and %d", len(r.Acked), r.Full, r.Other, seats, 200-seats)
			}
			apitest.CheckSeats(t, gl, single, r.Acked)

			// With at least 9 singles, one of them is refused only when all 8
			// seats are taken (nothing frees a seat here): exactly 8 are.
			mixed := seedSession(t, env, "gsess-race-mixed", game.SessionActive, seats, time.Now())
			r = apitest.RaceSeats(t, []*gamelift.Client{gl}, mixed, 100, 50)
			if len(r.Acked) != seats || len(r.Other) > 0 {
				t.Fatalf("singles and pairs: %d seats reserved, other errors %v; want %d", len(r.Acked), r.Other, seats)
			}
			apitest.CheckSeats(t, gl, mixed, r.Acked)
		})
	}
}

func TestReservationTimeout(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			// The clock starts at the real time: SigV4 checks signatures against it.
			clock := &testClock{now: time.Now().UTC()}
			env := apitest.Start(t, append(opts, withClock(clock))...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-to", game.SessionActive, 1, clock.Now())
			gl := env.Client()
			ctx := context.Background()
			svc := env.Server.Service()
			first, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("a")})
			if err != nil {
				t.Fatal(err)
			}
			clock.Add(59999 * time.Millisecond)
			svc.Sweep(ctx)
			var full *types.GameSessionFullException
			if _, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("b")}); !errors.As(err, &full) {
				t.Fatalf("1 ms before the timeout: %v, want GameSessionFullException", err)
			}
			clock.Add(time.Millisecond)
			// No sweep: the seat freed at exactly the timeout is reusable at once.
			second, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("b")})
			if err != nil {
				t.Fatalf("at the timeout: %v", err)
			}
			d, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: first.PlayerSession.PlayerSessionId})
			if err != nil || d.PlayerSessions[0].Status != types.PlayerSessionStatusTimedout || d.PlayerSessions[0].TerminationTime == nil {
				t.Errorf("first after timeout: %+v %v", d, err)
			}
			// The sweep times out the second 60 s later, and frees its seat.
			clock.Add(60 * time.Second)
			svc.Sweep(ctx)
			d, err = gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: second.PlayerSession.PlayerSessionId})
			if err != nil || d.PlayerSessions[0].Status != types.PlayerSessionStatusTimedout {
				t.Errorf("second after sweep: %+v %v", d, err)
			}
			g, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
			if err != nil || aws.ToInt32(g.GameSessions[0].CurrentPlayerSessionCount) != 0 {
				t.Errorf("seats after sweep: %+v %v", g, err)
			}
			// Accepting a timed-out reservation fails; a fresh one is accepted.
			if _, err := env.Server.Processes().AcceptPlayerSession(ctx, id, aws.ToString(second.PlayerSession.PlayerSessionId)); err == nil {
				t.Error("accepted a TIMEDOUT player session")
			}
			third, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("c")})
			if err != nil {
				t.Fatal(err)
			}
			clock.Add(60 * time.Second)
			if _, err := env.Server.Processes().AcceptPlayerSession(ctx, id, aws.ToString(third.PlayerSession.PlayerSessionId)); err == nil {
				t.Error("accepted a reservation at its timeout")
			}
		})
	}
}

func TestAcceptAndRemovePlayerSession(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-ar", game.SessionActive, 2, time.Now())
			other := seedSession(t, env, "gsess-other", game.SessionActive, 2, time.Now())
			gl := env.Client()
			ctx := context.Background()
			svc := env.Server.Processes()
			out, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: []string{"a", "b"}})
			if err != nil {
				t.Fatal(err)
			}
			a, b := aws.ToString(out.PlayerSessions[0].PlayerSessionId), aws.ToString(out.PlayerSessions[1].PlayerSessionId)
			if _, err := svc.AcceptPlayerSession(ctx, other, a); !game.IsKind(err, game.InvalidRequest) {
				t.Errorf("accept in another game session: %v", err)
			}
			if _, err := svc.AcceptPlayerSession(ctx, id, "psess-unknown"); !game.IsKind(err, game.NotFound) {
				t.Errorf("accept unknown: %v", err)
			}
			p, err := svc.AcceptPlayerSession(ctx, id, a)
			if err != nil || p.Status != game.PlayerActive {
				t.Fatalf("accept: %+v %v", p, err)
			}
			if _, err := svc.AcceptPlayerSession(ctx, id, a); err == nil {
				t.Error("accepted twice")
			}
			if p, err := env.Server.Processes().RemovePlayerSession(ctx, id, a); err != nil || p.Status != game.PlayerCompleted {
				t.Fatalf("remove: %+v %v", p, err)
			}
			if _, err := env.Server.Processes().RemovePlayerSession(ctx, id, a); err == nil {
				t.Error("removed twice")
			}
			if _, err := env.Server.Processes().RemovePlayerSession(ctx, id, b); err != nil {
				t.Fatal(err)
			}
			g, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
			if err != nil || aws.ToInt32(g.GameSessions[0].CurrentPlayerSessionCount) != 0 {
				t.Errorf("seats after removes: %+v %v", g, err)
			}
		})
	}
}

func TestDescribePlayerSessions(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleetAndLocation(t, env)
			id := seedSession(t, env, "gsess-d", game.SessionActive, 10, time.Now())
			id2 := seedSession(t, env, "gsess-d2", game.SessionActive, 10, time.Now())
			gl := env.Client()
			ctx := context.Background()
			out, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: []string{"a", "b", "c", "d", "e"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id2), PlayerId: aws.String("a")}); err != nil {
				t.Fatal(err)
			}
			a := aws.ToString(out.PlayerSessions[0].PlayerSessionId)
			if _, err := env.Server.Processes().AcceptPlayerSession(ctx, id, a); err != nil {
				t.Fatal(err)
			}
			n := 0
			p := gamelift.NewDescribePlayerSessionsPaginator(gl, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id), Limit: aws.Int32(2)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n += len(page.PlayerSessions)
			}
			if n != 5 {
				t.Errorf("paged %d, want 5", n)
			}
			check := func(what string, in *gamelift.DescribePlayerSessionsInput, want int) {
				t.Helper()
				d, err := gl.DescribePlayerSessions(ctx, in)
				if err != nil {
					t.Errorf("%s: %v", what, err)
				} else if len(d.PlayerSessions) != want {
					t.Errorf("%s: %d sessions, want %d", what, len(d.PlayerSessions), want)
				}
			}
			check("status filter on game session", &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id), PlayerSessionStatusFilter: aws.String("ACTIVE")}, 1)
			check("status filter ignored with PlayerId", &gamelift.DescribePlayerSessionsInput{PlayerId: aws.String("a"), PlayerSessionStatusFilter: aws.String("RESERVED")}, 2)
			check("status filter ignored with PlayerSessionId", &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(a), PlayerSessionStatusFilter: aws.String("TIMEDOUT")}, 1)
			check("limit ignored with PlayerSessionId", &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(a), Limit: aws.Int32(1), NextToken: aws.String("junk")}, 1)
			var invalid *types.InvalidRequestException
			for what, in := range map[string]*gamelift.DescribePlayerSessionsInput{
				"no selector":    {},
				"two selectors":  {GameSessionId: aws.String(id), PlayerId: aws.String("a")},
				"unknown status": {GameSessionId: aws.String(id), PlayerSessionStatusFilter: aws.String("GONE")},
				"bad token":      {GameSessionId: aws.String(id), NextToken: aws.String("!!")},
			} {
				if _, err := gl.DescribePlayerSessions(ctx, in); !errors.As(err, &invalid) {
					t.Errorf("%s: %v, want InvalidRequestException", what, err)
				}
			}
			var nf *types.NotFoundException
			if _, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String("psess-none")}); !errors.As(err, &nf) {
				t.Errorf("unknown player session: %v, want NotFoundException", err)
			}
		})
	}
}

func TestPlayerSessionsJSON(t *testing.T) {
	env := apitest.Start(t)
	seedFleetAndLocation(t, env)
	id := seedSession(t, env, "gsess-j", game.SessionActive, 2, time.Now())
	r := env.CallJSON(t, "CreatePlayerSessions", map[string]any{"GameSessionId": id, "PlayerIds": []string{"a"}, "PlayerDataMap": map[string]string{"a": "x"}})
	list, _ := r.JSON(t)["PlayerSessions"].([]any)
	if r.Status != 200 || len(list) != 1 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r = env.CallJSON(t, "CreatePlayerSession", map[string]any{"GameSessionId": id})
	if r.ErrorType(t) != "InvalidRequestException" {
		t.Errorf("no PlayerId: %s", r.Body)
	}
	r = env.CallJSON(t, "CreatePlayerSessions", map[string]any{"GameSessionId": id, "PlayerIds": []string{"b", "c"}})
	if r.ErrorType(t) != "GameSessionFullException" {
		t.Errorf("full: %s", r.Body)
	}
	r = env.CallJSON(t, "DescribePlayerSessions", map[string]any{"PlayerId": "nobody"})
	if list, ok := r.JSON(t)["PlayerSessions"].([]any); !ok || len(list) != 0 {
		t.Errorf("unknown player: %s, want PlayerSessions: []", r.Body)
	}
}
