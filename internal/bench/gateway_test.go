package bench

// The player gateway's benchmarks: create-and-join through the gateway
// with real Go server SDK processes, and search at Sessions sessions.
//
//	go test ./internal/bench -run '^$' -bench 'Gateway' -benchtime 2000x
//
// Results are in docs/benchmarks.md ("Player gateway").

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/gateway"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/sdk/playerwire"
	gl "github.com/anylift/anylift/sdk/server"
)

var benchSecret = []byte("anylift-bench-player-secret-0123456789abcdef")

// gatewayConfig opens every fleet to players, without a rate limit.
func gatewayConfig() gateway.Config {
	return gateway.Config{Auth: gateway.AuthConfig{HS256Secret: benchSecret}, AllowedFleets: []string{"*"}, RatePerSecond: -1}
}

// playerClient posts to the gateway with one player's token.
type playerClient struct {
	url   string
	token string
	http  *http.Client
}

var playerTransport = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}

func newPlayerClient(b *testing.B, url string, r *rand.Rand) *playerClient {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: fmt.Sprintf("player-%d", r.Uint64()),
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}).SignedString(benchSecret)
	if err != nil {
		b.Fatal(err)
	}
	return &playerClient{url: url, token: tok, http: &http.Client{Transport: playerTransport}}
}

func (c *playerClient) post(path string, in, out any) error {
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", path, resp.StatusCode, data)
	}
	return json.Unmarshal(data, out)
}

// startGatewayServer starts a server with its player gateway for the run.
func startGatewayServer(b *testing.B, st procStore) *server.Server {
	dir, err := os.MkdirTemp("", "anylift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	storeURL := st.url
	if storeURL != "" {
		storeURL = freshSchema(b, storeURL)
	}
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", DataDir: dir, Store: storeURL, Region: apitest.Region, AccountID: accountID,
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, AuthTokenTTL: 24 * time.Hour,
		SQLiteSynchronous: st.sync, PlayerListen: "127.0.0.1:0", Player: gatewayConfig(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { closeServer(srv) })
	return srv
}

var (
	gatewayMu   sync.Mutex
	gatewayEnvs = map[string]*gatewayEnv{}
)

type gatewayEnv struct {
	players string
	fleet   *benchFleet
	pool    *pool
}

// BenchmarkGatewayCreateAndJoin measures a player's create through the
// gateway (token checked, CreateGameSession, the wait until the process
// has activated it, CreatePlayerSession) and then the join at the game
// server (AcceptPlayerSession by the process). Each create takes a fresh
// Go server SDK process from a pool filled before the timer starts.
func BenchmarkGatewayCreateAndJoin(b *testing.B) {
	for _, st := range procStores() {
		b.Run(st.name, func(b *testing.B) {
			e := gatewayEnvFor(b, st)
			e.pool.fill(b, 100+b.N, 32)
			var mu sync.Mutex
			var used []*gl.Process
			run(b, func(r *rand.Rand) error {
				p, err := e.createAndJoin(newPlayerClient(b, e.players, r))
				if p != nil {
					mu.Lock()
					used = append(used, p)
					mu.Unlock()
				}
				return err
			})
			e.pool.retire(used, 32)
		})
	}
}

func gatewayEnvFor(b *testing.B, st procStore) *gatewayEnv {
	gatewayMu.Lock()
	defer gatewayMu.Unlock()
	if e, ok := gatewayEnvs[st.name]; ok {
		return e
	}
	raiseFileLimit(b)
	srv := startGatewayServer(b, st)
	f := newBenchFleet(b, srv.URL(), placementComputes)
	e := &gatewayEnv{players: "http://" + srv.PlayerAddr(), fleet: f, pool: newPool(f, "gw-"+st.name)}
	gatewayEnvs[st.name] = e
	return e
}

func (e *gatewayEnv) createAndJoin(c *playerClient) (*gl.Process, error) {
	var seat playerwire.Seat
	err := c.post(playerwire.PathCreate, playerwire.CreateSessionRequest{FleetId: e.fleet.FleetID, Location: e.fleet.Location,
		MaximumPlayerSessionCount: 8}, &seat)
	if err != nil {
		return nil, err
	}
	proc, err := e.pool.awaitActive(seat.GameSessionId)
	if err != nil {
		return proc, err
	}
	return proc, proc.AcceptPlayerSession(seat.PlayerSessionId)
}

// BenchmarkGatewaySearch searches the Sessions seeded sessions through
// the gateway (token checked on every request) with the selective filter
// of BenchmarkSearchSelectiveFilter.
func BenchmarkGatewaySearch(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			url := serveGateway(b, s)
			run(b, func(r *rand.Rand) error {
				c := newPlayerClient(b, url, r)
				var out playerwire.SearchResult
				err := c.post(playerwire.PathSearch, playerwire.SearchRequest{FleetId: s.fleetID, Limit: 20,
					FilterExpression: fmt.Sprintf("gameSessionProperties.map = 'map-%d' AND gameSessionProperties.mode = 'ranked' AND hasAvailablePlayerSessions = true", r.IntN(20))}, &out)
				if err == nil && len(out.GameSessions) == 0 {
					err = fmt.Errorf("search found nothing")
				}
				return err
			})
		})
	}
}

// serveGateway serves a gateway over the seeded server's application on
// its own listener, for the run.
func serveGateway(b *testing.B, s *seeded) string {
	gatewayMu.Lock()
	defer gatewayMu.Unlock()
	if s.players != "" {
		return s.players
	}
	gw, err := gateway.New(s.srv.PlayerControl(), gatewayConfig())
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: gw.Handler()}
	go hs.Serve(ln)
	cleanups = append(cleanups, func() { hs.Close() })
	s.players = "http://" + ln.Addr().String()
	return s.players
}

// BenchmarkGatewaySearchSorted is BenchmarkSearchSorted through the
// gateway: a cheap search, so the gateway's own cost shows.
func BenchmarkGatewaySearchSorted(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			url := serveGateway(b, s)
			run(b, func(r *rand.Rand) error {
				var out playerwire.SearchResult
				return newPlayerClient(b, url, r).post(playerwire.PathSearch, playerwire.SearchRequest{FleetId: s.fleetID, Limit: 20,
					FilterExpression: "hasAvailablePlayerSessions = true", SortExpression: "creationTimeMillis DESC"}, &out)
			})
		})
	}
}
