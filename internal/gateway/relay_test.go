package gateway

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

// seating is a control layer whose sessions are all ACTIVE with a free
// seat; it counts what it is asked to write, and refuses reservations as
// another node's when refuse is set.
type seating struct {
	untouchable
	creates, seats atomic.Int32
	refuse         *store.NotOwner
}

func (s *seating) CreateGameSession(_ context.Context, in *wire.CreateGameSessionInput) (*wire.CreateGameSessionOutput, error) {
	s.creates.Add(1)
	id := "arn:aws:gamelift:us-west-2::gamesession/" + *in.FleetId + "/gs-1"
	return &wire.CreateGameSessionOutput{GameSession: &wire.GameSession{GameSessionId: &id}}, nil
}

func (s *seating) DescribeGameSessions(_ context.Context, in *wire.DescribeGameSessionsInput) (*wire.DescribeGameSessionsOutput, error) {
	fleet, _, _ := game.ParseGameSessionARN(*in.GameSessionId)
	return &wire.DescribeGameSessionsOutput{GameSessions: []wire.GameSession{{GameSessionId: in.GameSessionId, FleetId: &fleet,
		Status: wire.String(game.SessionActive), Location: wire.String("custom-a"), MaximumPlayerSessionCount: wire.Int32(4),
		CurrentPlayerSessionCount: wire.Int32(0)}}}, nil
}

func (s *seating) DescribePlayerSessions(context.Context, *wire.DescribePlayerSessionsInput) (*wire.DescribePlayerSessionsOutput, error) {
	return &wire.DescribePlayerSessionsOutput{}, nil
}

func (s *seating) CreatePlayerSession(_ context.Context, in *wire.CreatePlayerSessionInput) (*wire.CreatePlayerSessionOutput, error) {
	if s.refuse != nil {
		return nil, s.refuse
	}
	s.seats.Add(1)
	return &wire.CreatePlayerSessionOutput{PlayerSession: &wire.PlayerSession{GameSessionId: in.GameSessionId,
		PlayerSessionId: wire.String("psess-1"), PlayerId: in.PlayerId, IpAddress: wire.String("10.0.0.1"), Port: wire.Int32(7000)}}, nil
}

// fleets routes the fleets it names to their nodes' bases.
type fleets map[string]string

func (f fleets) Route(fleet string) (string, bool) {
	base, ok := f[fleet]
	return base, !ok
}

// relayPair is an entry gateway and an owner's gateway behind a node
// listener; a player may make burst requests at once at the entry, and
// one at the owner.
func relayPair(t *testing.T, burst int) (entry *Gateway, entryCtl *seating, owner *seating, base string, client *cluster.Client) {
	t.Helper()
	secret := []byte("gateway-relay-test-node-secret")
	cfg := Config{Auth: AuthConfig{HS256Secret: testSecret}, AllowedFleets: []string{"*"}, RatePerSecond: 0.001, Burst: 1}
	owner = &seating{}
	og, err := New(owner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cluster.Handler(cluster.NewVerifier(secret, 0, nil), nil, cluster.Relays{Player: og.Handler()},
		slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	entryCtl = &seating{}
	cfg.Burst = burst
	if entry, err = New(entryCtl, cfg); err != nil {
		t.Fatal(err)
	}
	client = cluster.NewClient(secret, nil)
	return entry, entryCtl, owner, srv.URL, client
}

// A player's create and join on a fleet another node owns are served by
// that node's gateway, which counts nothing against the player's rate
// that the entry counted; a reservation the store refuses as another
// node's is relayed to the node it names.
func TestRequestsAreRelayedToTheOwnersGateway(t *testing.T) {
	entry, entryCtl, owner, base, client := relayPair(t, 3)
	entry.SetRelay(fleets{"fleet-away": base}, client)
	auth := map[string]string{"Authorization": "Bearer " + hs(t, "p1", time.Now().Add(time.Hour))}
	w := request(entry, "POST", playerwire.PathCreate, auth, `{"FleetId":"fleet-away","MaximumPlayerSessionCount":2,"Location":"custom-a"}`)
	if w.Code != http.StatusOK || owner.creates.Load() != 1 || owner.seats.Load() != 1 || entryCtl.creates.Load() != 0 {
		t.Fatalf("create: %d %s; the owner created %d and seated %d, the entry created %d", w.Code, w.Body,
			owner.creates.Load(), owner.seats.Load(), entryCtl.creates.Load())
	}
	w = request(entry, "POST", playerwire.PathJoin, auth, `{"GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-away/gs-1"}`)
	if w.Code != http.StatusOK || owner.seats.Load() != 2 || entryCtl.seats.Load() != 0 {
		t.Fatalf("join: %d %s", w.Code, w.Body)
	}
	// The third request of the burst passes the entry; the owner, which
	// would take one, does not count them again.
	w = request(entry, "POST", playerwire.PathJoin, auth, `{"GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-away/gs-1"}`)
	if w.Code != http.StatusOK {
		t.Fatalf("the third request: %d %s", w.Code, w.Body)
	}
	if w = request(entry, "POST", playerwire.PathJoin, auth, `{"GameSessionId":"x"}`); w.Code != http.StatusTooManyRequests {
		t.Fatalf("past the burst at the entry: %d", w.Code)
	}

	// A session id that names no fleet is served here, and the store's
	// refusal sends it to the owner it names.
	entry2, entryCtl2, owner2, base2, client2 := relayPair(t, 3)
	entry2.SetRelay(fleets{}, client2)
	entryCtl2.refuse = &store.NotOwner{FleetID: "fleet-away", NodeID: "node-b", Address: base2}
	w = request(entry2, "POST", playerwire.PathJoin, auth, `{"GameSessionId":"gs-without-arn"}`)
	if w.Code != http.StatusOK || owner2.seats.Load() != 1 {
		t.Fatalf("a refused join: %d %s, the owner seated %d", w.Code, w.Body, owner2.seats.Load())
	}

	// An owner that cannot be reached is a 500 to retry.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	entry2.SetRelay(fleets{"fleet-away": gone}, client2)
	w = request(entry2, "POST", playerwire.PathJoin, auth, `{"GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-away/gs-1"}`)
	if w.Code != http.StatusInternalServerError || codeOf(t, w) != CodeUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("an owner that cannot be reached: %d %v %s", w.Code, w.Header(), w.Body)
	}
}
