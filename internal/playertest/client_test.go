package playertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/sdk/client"
)

// chatHooks connect a library client to the chat server: present the
// player session id, expect OK; leave by hanging up and waiting for the
// server to close (it has removed the player by then).
type chatHooks struct {
	mu sync.Mutex
	c  net.Conn
	in *bufio.Reader
}

func (h *chatHooks) connect(ctx context.Context, seat client.Seat) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", seat.Address())
	if err != nil {
		return err
	}
	in := bufio.NewReader(c)
	fmt.Fprintf(c, "%s\n", seat.PlayerSessionID)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	line, err := in.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "OK" {
		c.Close()
		return fmt.Errorf("game server refused: %q %v", line, err)
	}
	c.SetReadDeadline(time.Time{})
	h.mu.Lock()
	h.c, h.in = c, in
	h.mu.Unlock()
	return nil
}

func (h *chatHooks) disconnect(ctx context.Context, seat client.Seat) error {
	h.mu.Lock()
	c, in := h.c, h.in
	h.mu.Unlock()
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(waitLimit))
	_, err := io.Copy(io.Discard, in)
	c.Close()
	return err
}

func (h *chatHooks) hooks() client.Hooks {
	return client.Hooks{Connect: h.connect, Disconnect: h.disconnect}
}

// gatewayClient is a library client over the gateway for player.
func (e *env) gatewayClient(t *testing.T, player string, n client.Notifications) (*client.Client, *chatHooks) {
	t.Helper()
	h := &chatHooks{}
	c, err := client.ConfigureClient(client.Config{
		Region: "us-west-2", Endpoint: e.players, Hooks: h.hooks(), Notifications: n,
		PlayerToken: func(context.Context) (string, error) { return e.tokenFor(t, player), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, h
}

// controlClient is a library client over the control plane acting for player.
func (e *env) controlClient(t *testing.T, player string, n client.Notifications) (*client.Client, *chatHooks) {
	t.Helper()
	h := &chatHooks{}
	c, err := client.ConfigureClient(client.Config{
		Region: "us-west-2", Endpoint: e.URL, Hooks: h.hooks(), Notifications: n, PlayerID: player,
		Credentials: credentials.NewStaticCredentialsProvider(apitest.AccessKey, apitest.SecretKey, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, h
}

// TestLibraryBlocking: create, search, join and leave with the blocking
// forms, over each transport, against the chat server; the game ends by
// passive destroy when the last player leaves.
func TestLibraryBlocking(t *testing.T) {
	for name, newClient := range map[string]func(*env, *testing.T, string, client.Notifications) (*client.Client, *chatHooks){
		"gateway": (*env).gatewayClient, "control-plane": (*env).controlClient,
	} {
		t.Run(name, func(t *testing.T) {
			e := start(t, nil)
			servers := e.launch(t, 1)
			ctx := context.Background()
			alice, _ := newClient(e, t, "alice", client.Notifications{})
			seat, err := alice.CreateSession(ctx, client.CreateSessionRequest{FleetID: e.fleet, MaxPlayers: 2, Name: "lib",
				Properties: map[string]string{"mode": "lib"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := alice.JoinSession(ctx, client.JoinSessionRequest{Seat: &seat}); err != nil {
				t.Fatal(err)
			}
			bob, _ := newClient(e, t, "bob", client.Notifications{})
			found, err := bob.SearchSessions(ctx, client.SearchSessionsRequest{FleetID: e.fleet, Filter: "gameSessionProperties.mode = 'lib'"})
			if err != nil || len(found.Sessions) != 1 || found.Sessions[0].Properties["mode"] != "lib" || found.Sessions[0].CurrentPlayers != 1 {
				t.Fatalf("search: %+v %v", found, err)
			}
			bs, err := bob.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: found.Sessions[0].GameSessionID})
			if err != nil || bs.GameSessionID != seat.GameSessionID {
				t.Fatalf("bob join: %+v %v", bs, err)
			}
			carol, _ := newClient(e, t, "carol", client.Notifications{})
			if _, err := carol.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: seat.GameSessionID}); client.CodeOf(err) != client.CodeGameSessionFull {
				t.Fatalf("carol joined a full session: %v", err)
			}
			if err := bob.LeaveSession(ctx); err != nil {
				t.Fatal(err)
			}
			if got := e.playerStatus(t, bs.PlayerSessionID); got != types.PlayerSessionStatusCompleted {
				t.Fatalf("bob's player session is %s", got)
			}
			if err := bob.LeaveSession(ctx); client.CodeOf(err) != client.CodeNotJoined {
				t.Fatalf("second leave: %v", err)
			}
			if err := alice.LeaveSession(ctx); err != nil {
				t.Fatal(err)
			}
			e.waitSession(t, seat.GameSessionID, types.GameSessionStatusTerminated)
			servers[0].waitExit(t)
		})
	}
}

// TestLibraryAsync: the asynchronous forms deliver their results to the
// registered notification handlers, over each transport.
func TestLibraryAsync(t *testing.T) {
	for name, newClient := range map[string]func(*env, *testing.T, string, client.Notifications) (*client.Client, *chatHooks){
		"gateway": (*env).gatewayClient, "control-plane": (*env).controlClient,
	} {
		t.Run(name, func(t *testing.T) {
			e := start(t, nil)
			e.launch(t, 1)
			created, joined, searched, left := make(chan client.Seat, 1), make(chan client.Seat, 1), make(chan client.SearchSessionsResult, 1), make(chan error, 1)
			fail := func(err error) {
				if err != nil {
					t.Error(err)
				}
			}
			c, _ := newClient(e, t, "alice", client.Notifications{
				OnCreateSession:  func(s client.Seat, err error) { fail(err); created <- s },
				OnJoinSession:    func(s client.Seat, err error) { fail(err); joined <- s },
				OnSearchSessions: func(r client.SearchSessionsResult, err error) { fail(err); searched <- r },
				OnLeaveSession:   func(err error) { left <- err },
			})
			c.CreateSessionAsync(client.CreateSessionRequest{FleetID: e.fleet, MaxPlayers: 3})
			seat := <-created
			c.SearchSessionsAsync(client.SearchSessionsRequest{FleetID: e.fleet})
			if r := <-searched; len(r.Sessions) != 1 || r.Sessions[0].GameSessionID != seat.GameSessionID {
				t.Fatalf("search: %+v", r)
			}
			c.JoinSessionAsync(client.JoinSessionRequest{Seat: &seat})
			if s := <-joined; s.PlayerSessionID != seat.PlayerSessionID {
				t.Fatalf("joined %+v", s)
			}
			c.LeaveSessionAsync()
			if err := <-left; err != nil {
				t.Fatal(err)
			}
			e.waitSession(t, seat.GameSessionID, types.GameSessionStatusTerminated)
		})
	}
}

// TestLibraryConnectHookFailure: when the game cannot connect, the join
// fails with ConnectFailed and the seat is freed.
func TestLibraryConnectHookFailure(t *testing.T) {
	e := start(t, nil)
	e.launch(t, 1)
	ctx := context.Background()
	alice, _ := e.gatewayClient(t, "alice", client.Notifications{})
	seat, err := alice.CreateSession(ctx, client.CreateSessionRequest{FleetID: e.fleet, MaxPlayers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.ConfigureClient(client.Config{Region: "us-west-2", Endpoint: e.players,
		PlayerToken: func(context.Context) (string, error) { return e.tokenFor(t, "bob"), nil },
		Hooks:       client.Hooks{Connect: func(context.Context, client.Seat) error { return errors.New("no route to the game") }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: seat.GameSessionID})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != client.CodeConnectFailed || ce.GameSessionID != seat.GameSessionID {
		t.Fatalf("join with a failing hook: %v", err)
	}
	if _, ok := c.Joined(); ok {
		t.Fatal("the client thinks it joined")
	}
	if n := e.occupied(t, seat.GameSessionID, "bob"); n != 0 {
		t.Fatalf("bob still holds %d seats", n)
	}
}

// TestLibraryErrorsAndConfig: typed errors for a bad configuration, a bad
// token and an unknown session.
func TestLibraryErrorsAndConfig(t *testing.T) {
	e := start(t, nil)
	for _, cfg := range []client.Config{
		{Region: "US East", Endpoint: e.players, DevPlayerID: "p"},
		{Region: "us-east-1", Endpoint: "ftp://x", DevPlayerID: "p"},
		{Region: "us-east-1", Endpoint: e.players},
		{Region: "us-east-1", DevPlayerID: "p"},
	} {
		if _, err := client.ConfigureClient(cfg); client.CodeOf(err) != client.CodeInvalidParameter {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	c, err := client.ConfigureClient(client.Config{Region: "us-east-1", Endpoint: e.players,
		PlayerToken: func(context.Context) (string, error) { return "forged", nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SearchSessions(context.Background(), client.SearchSessionsRequest{FleetID: e.fleet}); client.CodeOf(err) != client.CodeInvalidToken {
		t.Fatalf("forged token: %v", err)
	}
	good, _ := e.gatewayClient(t, "alice", client.Notifications{})
	if _, err := good.JoinSession(context.Background(), client.JoinSessionRequest{GameSessionID: "gsess-nope"}); client.CodeOf(err) != client.CodeNotFound {
		t.Fatalf("unknown session: %v", err)
	}
	cp, _ := e.controlClient(t, "alice", client.Notifications{})
	if _, err := cp.JoinSession(context.Background(), client.JoinSessionRequest{GameSessionID: "gsess-nope"}); client.CodeOf(err) != client.CodeNotFound {
		t.Fatalf("unknown session over the control plane: %v", err)
	}
}

// occupied counts the player's RESERVED or ACTIVE seats in a game session.
func (e *env) occupied(t *testing.T, gameSessionID, player string) int {
	t.Helper()
	out, err := e.gl.DescribePlayerSessions(context.Background(), &gamelift.DescribePlayerSessionsInput{GameSessionId: &gameSessionID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ps := range out.PlayerSessions {
		if *ps.PlayerId == player && (ps.Status == types.PlayerSessionStatusReserved || ps.Status == types.PlayerSessionStatusActive) {
			n++
		}
	}
	return n
}

// TestLibraryCreateOnQueue: CreateSessionOnQueue, blocking and
// asynchronous, over each transport: the seat placed for the player is
// admitted by the game server.
func TestLibraryCreateOnQueue(t *testing.T) {
	for name, newClient := range map[string]func(*env, *testing.T, string, client.Notifications) (*client.Client, *chatHooks){
		"gateway": (*env).gatewayClient, "control-plane": (*env).controlClient,
	} {
		t.Run(name, func(t *testing.T) {
			e := start(t, []apitest.Option{func(c *server.Config) { c.Player.AllowedQueues = []string{"players"} }})
			e.launch(t, 2)
			e.queue(t, "players")
			ctx := context.Background()
			placed := make(chan client.Seat, 1)
			c, _ := newClient(e, t, "alice", client.Notifications{OnCreateSessionOnQueue: func(s client.Seat, err error) {
				if err != nil {
					t.Error(err)
				}
				placed <- s
			}})
			seat, err := c.CreateSessionOnQueue(ctx, client.CreateSessionOnQueueRequest{QueueName: "players", MaxPlayers: 2})
			if err != nil || seat.PlayerSessionID == "" {
				t.Fatalf("create on queue: %+v %v", seat, err)
			}
			if _, err := c.JoinSession(ctx, client.JoinSessionRequest{Seat: &seat}); err != nil {
				t.Fatal(err)
			}
			c2, _ := newClient(e, t, "bob", client.Notifications{OnCreateSessionOnQueue: c2Handler(t, placed)})
			c2.CreateSessionOnQueueAsync(client.CreateSessionOnQueueRequest{QueueName: "players", MaxPlayers: 2})
			if s := <-placed; s.GameSessionID == "" || s.GameSessionID == seat.GameSessionID {
				t.Fatalf("second placement: %+v", s)
			}
		})
	}
}

func c2Handler(t *testing.T, ch chan client.Seat) func(client.Seat, error) {
	return func(s client.Seat, err error) {
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}
}

// queue creates a queue with the fleet as its one destination.
func (e *env) queue(t *testing.T, name string) {
	t.Helper()
	_, err := e.gl.CreateGameSessionQueue(context.Background(), &gamelift.CreateGameSessionQueueInput{
		Name: aws.String(name), Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(e.fleetARN(t))}}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLibraryRejoin: a client whose connection drops gets back into the
// same game session with RejoinSession inside the grace period.
func TestLibraryRejoin(t *testing.T) {
	e := start(t, nil)
	e.launch(t, 1)
	ctx := context.Background()
	keeper, _ := e.gatewayClient(t, "keeper", client.Notifications{})
	seat, err := keeper.CreateSession(ctx, client.CreateSessionRequest{FleetID: e.fleet, MaxPlayers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keeper.JoinSession(ctx, client.JoinSessionRequest{Seat: &seat}); err != nil {
		t.Fatal(err)
	}
	c, hooks := e.gatewayClient(t, "alice", client.Notifications{})
	first, err := c.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: seat.GameSessionID})
	if err != nil {
		t.Fatal(err)
	}
	hooks.disconnect(ctx, first) // the connection drops; the server removes alice
	if got := e.playerStatus(t, first.PlayerSessionID); got != types.PlayerSessionStatusCompleted {
		t.Fatalf("alice's first player session is %s", got)
	}
	c2, _ := e.gatewayClient(t, "alice", client.Notifications{})
	again, err := c2.RejoinSession(ctx, seat.GameSessionID)
	if err != nil || again.GameSessionID != seat.GameSessionID || again.PlayerSessionID == first.PlayerSessionID {
		t.Fatalf("rejoin: %+v %v", again, err)
	}
	if got := e.playerStatus(t, again.PlayerSessionID); got != types.PlayerSessionStatusActive {
		t.Fatalf("the rejoined seat is %s, not ACTIVE", got)
	}
	cp, _ := e.controlClient(t, "alice", client.Notifications{})
	if _, err := cp.RejoinSession(ctx, seat.GameSessionID); client.CodeOf(err) != client.CodeUnsupported {
		t.Fatalf("rejoin over the control plane: %v", err)
	}
}
