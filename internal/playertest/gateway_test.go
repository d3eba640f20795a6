package playertest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/gateway"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/sdk/playerwire"
	gl "github.com/anylift/anylift/sdk/server"
)

// TestGatewayCreateSearchJoinLeave plays one game through the gateway:
// create (waits for ACTIVE, reserves the creator's seat), search, join,
// a full session, the players admitted by the real game server, leave,
// and the passive destroy when the last player has left.
func TestGatewayCreateSearchJoinLeave(t *testing.T) {
	for name, opts := range apitest.BackendsOwned(t) {
		t.Run(name, func(t *testing.T) {
			e := start(t, opts)
			servers := e.launch(t, 1)
			alice := e.create(t, "alice", 2)
			if e.sessionStatus(t, alice.GameSessionId) != types.GameSessionStatusActive {
				t.Fatal("create answered before the session was ACTIVE")
			}
			pa, line := connect(t, alice)
			if line != "OK" {
				t.Fatalf("game server answered %q", line)
			}

			var found playerwire.SearchResult
			e.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{
				FleetId: e.fleet, FilterExpression: "hasAvailablePlayerSessions=true AND gameSessionProperties.mode = 'chat'",
				SortExpression: "creationTimeMillis DESC",
			}).ok(t, &found)
			if len(found.GameSessions) != 1 || found.GameSessions[0].GameSessionId != alice.GameSessionId ||
				found.GameSessions[0].CurrentPlayerSessionCount != 1 {
				t.Fatalf("search answered %+v", found)
			}
			var bob playerwire.Seat
			e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).ok(t, &bob)
			pb, line := connect(t, bob)
			if line != "OK" {
				t.Fatalf("game server answered bob %q", line)
			}
			e.post(t, playerwire.PathJoin, e.tokenFor(t, "carol"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
				failed(t, http.StatusConflict, "GameSessionFull")

			// bob leaves the way the library does: hang up, then leave.
			pb.hangUp(t)
			var left playerwire.LeaveResult
			e.post(t, playerwire.PathLeave, e.tokenFor(t, "bob"), playerwire.LeaveRequest{GameSessionId: alice.GameSessionId}).ok(t, &left)
			if got := e.playerStatus(t, bob.PlayerSessionId); got != types.PlayerSessionStatusCompleted {
				t.Fatalf("bob's player session is %s", got)
			}
			pa.hangUp(t)
			e.waitSession(t, alice.GameSessionId, types.GameSessionStatusTerminated)
			servers[0].waitExit(t)
		})
	}
}

// TestGatewayLeaveFreesSeat: leaving through the gateway completes a seat
// the game server never saw, and frees it for another player.
func TestGatewayLeaveFreesSeat(t *testing.T) {
	e := start(t, nil)
	e.launch(t, 1)
	alice := e.create(t, "alice", 1)
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusConflict, "GameSessionFull")
	var left playerwire.LeaveResult
	e.post(t, playerwire.PathLeave, e.tokenFor(t, "alice"), playerwire.LeaveRequest{GameSessionId: alice.GameSessionId, PlayerSessionId: alice.PlayerSessionId}).ok(t, &left)
	if len(left.PlayerSessionIds) != 1 || left.PlayerSessionIds[0] != alice.PlayerSessionId {
		t.Fatalf("leave answered %+v", left)
	}
	if got := e.playerStatus(t, alice.PlayerSessionId); got != types.PlayerSessionStatusCompleted {
		t.Fatalf("alice's player session is %s", got)
	}
	// mallory cannot leave alice's seat, nor learn it exists.
	e.post(t, playerwire.PathLeave, e.tokenFor(t, "mallory"), playerwire.LeaveRequest{GameSessionId: alice.GameSessionId, PlayerSessionId: alice.PlayerSessionId}).failed(t, http.StatusNotFound, "NotFound")
	// alice's seat is held for her: bob is still refused while the grace runs.
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusConflict, "GameSessionFull")
	e.clock.Advance(grace)
	var bob playerwire.Seat
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).ok(t, &bob)
}

// TestGatewayJoinRefusals: a DENY_ALL session, an unknown session, a fleet
// closed to players.
func TestGatewayJoinRefusals(t *testing.T) {
	e := start(t, nil)
	e.launch(t, 1)
	alice := e.create(t, "alice", 4)
	_, err := e.gl.UpdateGameSession(context.Background(), &gamelift.UpdateGameSessionInput{
		GameSessionId: aws.String(alice.GameSessionId), PlayerSessionCreationPolicy: types.PlayerSessionCreationPolicyDenyAll})
	if err != nil {
		t.Fatal(err)
	}
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusConflict, "InvalidGameSessionStatus")
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: "gsess-unknown"}).
		failed(t, http.StatusNotFound, "NotFound")
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "bob"), playerwire.CreateSessionRequest{FleetId: e.fleet, MaximumPlayerSessionCount: 2}).
		failed(t, http.StatusServiceUnavailable, "FleetCapacityExceeded")
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "bob"), playerwire.CreateSessionRequest{FleetId: e.fleet}).
		failed(t, http.StatusBadRequest, "InvalidRequest")
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: strings.Repeat("x", 2000)}).
		failed(t, http.StatusBadRequest, "InvalidRequest")
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "bob"), playerwire.CreateSessionRequest{FleetId: e.fleet, AliasId: "alias-x"}).
		failed(t, http.StatusBadRequest, "InvalidRequest")
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "bob"), map[string]any{"FleetId": e.fleet, "Admin": true}).
		failed(t, http.StatusBadRequest, "InvalidRequest")
	e.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{FleetId: e.fleet, FilterExpression: "playerSessionCount >"}).
		failed(t, http.StatusBadRequest, "InvalidRequest")
	e.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{AliasId: "alias-00000000-0000-0000-0000-000000000000"}).
		failed(t, http.StatusForbidden, "Forbidden")
}

// TestGatewayClosedFleet: a fleet not in the allow-list is Forbidden to
// create on and search, and its sessions are invisible to join.
func TestGatewayClosedFleet(t *testing.T) {
	e := start(t, []apitest.Option{func(c *server.Config) { c.Player.AllowedFleets = []string{"fleet-other"} }})
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "bob"), playerwire.CreateSessionRequest{FleetId: e.fleet, MaximumPlayerSessionCount: 2}).
		failed(t, http.StatusForbidden, "Forbidden")
	e.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{FleetId: e.fleet}).
		failed(t, http.StatusForbidden, "Forbidden")
	e.launch(t, 1)
	id, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
		FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: aws.ToString(id.GameSession.GameSessionId)}).
		failed(t, http.StatusNotFound, "NotFound")
}

// TestGatewayTokens: missing, expired, not yet valid, forged (another
// key, another algorithm, none) and subject-less tokens are refused
// before anything is read.
func TestGatewayTokens(t *testing.T) {
	e := start(t, nil)
	now := e.clock.Now()
	valid := jwt.RegisteredClaims{Subject: "alice", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	cases := map[string]struct {
		token string
		code  string
	}{
		"missing": {"", "MissingToken"},
		"expired": {sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "alice",
			ExpiresAt: jwt.NewNumericDate(now.Add(-time.Minute))}), "InvalidToken"},
		"not yet valid": {sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "alice",
			NotBefore: jwt.NewNumericDate(now.Add(time.Minute)), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}), "InvalidToken"},
		"no expiry":  {sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "alice"}), "InvalidToken"},
		"forged":     {sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!!"), valid), "InvalidToken"},
		"other alg":  {sign(t, jwt.SigningMethodEdDSA, edKey, valid), "InvalidToken"},
		"alg none":   {sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid), "InvalidToken"},
		"no subject": {sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{ExpiresAt: valid.ExpiresAt}), "InvalidToken"},
		"garbage":    {"not.a.jwt", "InvalidToken"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := e.post(t, playerwire.PathSearch, c.token, playerwire.SearchRequest{FleetId: e.fleet})
			a.failed(t, http.StatusUnauthorized, c.code)
		})
	}
	var ok playerwire.SearchResult
	e.post(t, playerwire.PathSearch, sign(t, jwt.SigningMethodHS256, secret, valid), playerwire.SearchRequest{FleetId: e.fleet}).ok(t, &ok)
}

// TestGatewayRejoin: a player who dropped gets a seat in the same game
// session again inside the grace period, even when the session would be
// full for newcomers; after it, the seat is gone.
func TestGatewayRejoin(t *testing.T) {
	e := start(t, nil)
	e.launch(t, 1)
	alice := e.create(t, "alice", 2)
	pa, _ := connect(t, alice)
	var bob playerwire.Seat
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).ok(t, &bob)
	if _, line := connect(t, bob); line != "OK" {
		t.Fatalf("bob refused: %s", line)
	}
	e.post(t, playerwire.PathRejoin, e.tokenFor(t, "alice"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusConflict, "AlreadyJoined")
	pa.hangUp(t) // alice's connection drops; the server removes her
	if got := e.playerStatus(t, alice.PlayerSessionId); got != types.PlayerSessionStatusCompleted {
		t.Fatalf("alice's player session is %s", got)
	}
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "carol"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusConflict, "GameSessionFull")
	e.clock.Advance(grace - time.Second)
	var back playerwire.Seat
	e.post(t, playerwire.PathRejoin, e.tokenFor(t, "alice"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).ok(t, &back)
	if back.GameSessionId != alice.GameSessionId || back.PlayerSessionId == alice.PlayerSessionId {
		t.Fatalf("rejoin answered %+v", back)
	}
	pa2, line := connect(t, back)
	if line != "OK" {
		t.Fatalf("game server refused the rejoin: %s", line)
	}
	pa2.hangUp(t)
	e.clock.Advance(grace)
	e.post(t, playerwire.PathRejoin, e.tokenFor(t, "alice"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusGone, "RejoinWindowClosed")
	e.post(t, playerwire.PathRejoin, e.tokenFor(t, "dave"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).
		failed(t, http.StatusNotFound, "NotFound")
	var carol playerwire.Seat
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "carol"), playerwire.JoinRequest{GameSessionId: alice.GameSessionId}).ok(t, &carol)
}

// TestGatewayCreateOnQueue: a create on an allowed queue waits until the
// placement is FULFILLED and answers the seat placed for the caller, who
// the game server then admits; a queue not allowed is Forbidden.
func TestGatewayCreateOnQueue(t *testing.T) {
	e := start(t, []apitest.Option{func(c *server.Config) { c.Player.AllowedQueues, c.Player.AllowedFleets = []string{"players"}, nil }})
	e.launch(t, 1)
	fleetARN := e.fleetARN(t)
	for _, name := range []string{"players", "closed"} {
		_, err := e.gl.CreateGameSessionQueue(context.Background(), &gamelift.CreateGameSessionQueueInput{
			Name: aws.String(name), Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(fleetARN)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "alice"), playerwire.CreateSessionRequest{QueueName: "closed", MaximumPlayerSessionCount: 2}).
		failed(t, http.StatusForbidden, "Forbidden")
	var seat playerwire.Seat
	e.post(t, playerwire.PathCreate, e.tokenFor(t, "alice"), playerwire.CreateSessionRequest{QueueName: "players", MaximumPlayerSessionCount: 2}).ok(t, &seat)
	if seat.GameSessionId == "" || seat.PlayerSessionId == "" || seat.Port == 0 {
		t.Fatalf("create on queue answered %+v", seat)
	}
	if _, line := connect(t, seat); line != "OK" {
		t.Fatalf("game server refused the placed seat: %s", line)
	}
	var bob playerwire.Seat
	e.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: seat.GameSessionId}).ok(t, &bob)
}

func (e *env) fleetARN(t *testing.T) string {
	t.Helper()
	out, err := e.gl.DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{e.fleet}})
	if err != nil || len(out.FleetAttributes) != 1 {
		t.Fatalf("DescribeFleetAttributes: %v", err)
	}
	return aws.ToString(out.FleetAttributes[0].FleetArn)
}

// TestGatewayActivationTimeout: a session whose server never activates it
// is reported at the create's bound with its id (ActivationTimeout), not
// left without the caller knowing. The server here is a Go SDK process
// that ignores OnStartGameSession.
func TestGatewayActivationTimeout(t *testing.T) {
	e := start(t, []apitest.Option{func(c *server.Config) { c.Player.CreateTimeout = 200 * time.Millisecond }})
	proc, err := gl.Init(gl.ServerParameters{WebSocketURL: e.Server.SDKEndpoint(), AuthToken: e.token, HostID: computeName,
		FleetID: e.fleet, ProcessID: "silent"}, gl.Options{Getenv: func(string) string { return "" }, Exit: func(int) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Destroy() })
	if err := proc.ProcessReady(gl.ProcessParameters{Port: 7001, OnStartGameSession: func(gl.GameSession) {}, OnProcessTerminate: func() {}}); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, 1)
	pe := e.post(t, playerwire.PathCreate, e.tokenFor(t, "alice"), playerwire.CreateSessionRequest{FleetId: e.fleet, MaximumPlayerSessionCount: 2}).
		failed(t, http.StatusGatewayTimeout, "ActivationTimeout")
	if pe.GameSessionId == "" || e.sessionStatus(t, pe.GameSessionId) != types.GameSessionStatusActivating {
		t.Fatalf("the answer does not name the activating session: %+v", pe)
	}
}

// TestGatewayAlias: with only an alias open to players, they create,
// search and join through it; the fleet itself stays closed by id.
func TestGatewayAlias(t *testing.T) {
	e := start(t, []apitest.Option{func(c *server.Config) { c.Player.AllowedFleets = nil }})
	e.launch(t, 1)
	out, err := e.gl.CreateAlias(context.Background(), &gamelift.CreateAliasInput{Name: aws.String("live"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(e.fleet)}})
	if err != nil {
		t.Fatal(err)
	}
	alias := aws.ToString(out.Alias.AliasId)
	e2 := e.withAllowedAlias(t, alias)
	var seat playerwire.Seat
	e2.post(t, playerwire.PathCreate, e.tokenFor(t, "alice"), playerwire.CreateSessionRequest{AliasId: alias, MaximumPlayerSessionCount: 2}).ok(t, &seat)
	var found playerwire.SearchResult
	e2.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{AliasId: alias}).ok(t, &found)
	if len(found.GameSessions) != 1 {
		t.Fatalf("search through the alias: %+v", found)
	}
	var bob playerwire.Seat
	e2.post(t, playerwire.PathJoin, e.tokenFor(t, "bob"), playerwire.JoinRequest{GameSessionId: seat.GameSessionId}).ok(t, &bob)
	e2.post(t, playerwire.PathSearch, e.tokenFor(t, "bob"), playerwire.SearchRequest{FleetId: e.fleet}).
		failed(t, http.StatusForbidden, "Forbidden")
}

// withAllowedAlias is e with a second gateway, over the same service,
// whose allow-list is just the alias (alias ids are known only once made).
func (e *env) withAllowedAlias(t *testing.T, alias string) *env {
	t.Helper()
	gw, err := gateway.New(e.Server.PlayerControl(), gateway.Config{Auth: gateway.AuthConfig{HS256Secret: secret},
		AllowedAliases: []string{alias}, RatePerSecond: -1, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(gw.Handler())
	t.Cleanup(hs.Close)
	e2 := *e
	e2.players = hs.URL
	return &e2
}
