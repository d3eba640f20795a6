// Package bench measures the control plane end to end: the real server on
// 127.0.0.1:0, real HTTP, requests signed with SigV4 as botocore signs
// them, answers decoded. Next to the operations, a trivial HTTP handler
// measured the same way is the ceiling of this machine and client.
//
//	go test ./internal/bench -run '^$' -bench . -benchtime 10000x
//
// Each benchmark reports req/s and latency percentiles (p50, p99, in µs);
// ANYLIFT_BENCH_CPUPROFILE=/tmp/p writes a CPU profile of each timed part
// to /tmp/p.<benchmark name>.
// ANYLIFT_TEST_POSTGRES adds the PostgreSQL variants: "postgres", a node
// that reads every fleet from the store, and "postgres-owned", a node
// with fleet ownership, which owns the seeded fleet and answers its reads
// from memory. Results and the machine they ran on go in
// docs/benchmarks.md.
package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

// Sessions is the number of ACTIVE game sessions seeded for the session
// benchmarks.
const Sessions = 100_000

// client sends signed AWS JSON 1.1 requests over keep-alive connections.
type client struct {
	url    string
	http   *http.Client
	signer *v4.Signer
}

func newClient(url string) *client {
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	return &client{url: url, http: &http.Client{Transport: tr}, signer: v4.NewSigner()}
}

func (c *client) call(op string, body []byte) error { return c.do(op, body, nil) }

// run drives body concurrently b.N times and reports throughput and
// latency percentiles. body gets a per-goroutine random source.
func run(b *testing.B, body func(r *rand.Rand) error) {
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(8)
	stop := profileTimed(b, strings.ReplaceAll(b.Name(), "/", "."))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			if err := body(r); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkCeiling is a trivial handler answering "{}" to the same signed
// requests: what this machine and client can do at best.
func BenchmarkCeiling(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Write([]byte("{}"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := newClient("http://" + ln.Addr().String())
	body := []byte(`{"FleetId": "fleet-1", "Limit": 20}`)
	run(b, func(*rand.Rand) error { return c.call("DescribeGameSessions", body) })
}

// seeded is a server with Sessions ACTIVE game sessions in one fleet.
type seeded struct {
	url     string
	fleetID string
	ids     []string
	srv     *server.Server
	players string // the player gateway over srv, once serveGateway made it
}

var (
	seedMu sync.Mutex
	seeds  = map[string]*seeded{}
)

// modes are the values of the "mode" property, spread evenly.
var modes = []string{"ranked", "casual", "ffa", "ctf"}

// seed starts (once per backend for the whole run) a server holding
// Sessions ACTIVE sessions with two independent properties: mode (4
// values) and map (20 values), so a mode and map pair selects 1 in 80.
func seed(b *testing.B, backend, storeURL string) *seeded {
	seedMu.Lock()
	defer seedMu.Unlock()
	if s, ok := seeds[backend]; ok {
		return s
	}
	var opts []func(*server.Config)
	if backend == ownedBackend {
		opts = append(opts, func(c *server.Config) {
			c.FleetOwnership, c.NodeListen, c.NodeSecret = server.OwnershipOn, "127.0.0.1:0", "bench-node-secret-0123456789"
		})
	}
	srv := startServer(b, storeURL, opts...)
	st := srv.Store()
	acct := game.Account{Region: apitest.Region, ID: accountID}
	now := time.Now().UTC().Truncate(time.Millisecond)
	f := seedFleet(b, st, acct, now)
	s := &seeded{url: srv.URL(), fleetID: f.ID, srv: srv}
	seedSessions(b, st, acct, f, now)
	if mem := srv.OwnedMemory(); mem != nil {
		for deadline := time.Now().Add(time.Minute); !mem.Loaded(f.ID); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("the seeded fleet was never loaded into the memory of its owner")
			}
		}
	}
	if storeURL != "" {
		analyze(b, lastSchemaDSN)
	}
	for j := 0; j < Sessions; j++ {
		s.ids = append(s.ids, acct.GameSessionARN(f.ID, "custom-bench", fmt.Sprintf("gsess-bench-%06d", j)))
	}
	seeds[backend] = s
	return s
}

// seedFleet inserts the location custom-bench and an Anywhere fleet in it.
func seedFleet(b *testing.B, st store.Store, acct game.Account, now time.Time) *game.Fleet {
	f := &game.Fleet{ID: game.NewFleetID(), Name: "bench", Status: game.FleetActive, ComputeType: "ANYWHERE",
		CreationTime: now, Locations: []string{"custom-bench"}}
	f.ARN = acct.FleetARN(f.ID)
	err := st.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertLocation(&game.Location{Name: "custom-bench", ARN: acct.LocationARN("custom-bench"), CreationTime: now}); err != nil {
			return err
		}
		return tx.InsertFleet(f)
	})
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// seedSessions inserts Sessions ACTIVE game sessions into fleet f, in
// batches: mode and map properties, 200 seats, one a millisecond from now.
func seedSessions(b *testing.B, st store.Store, acct game.Account, f *game.Fleet, now time.Time) {
	ctx := context.Background()
	const batch = 5000
	for i := 0; i < Sessions; i += batch {
		err := st.Update(ctx, func(tx store.Tx) error {
			for j := i; j < i+batch && j < Sessions; j++ {
				idString := fmt.Sprintf("gsess-bench-%06d", j)
				mode := modes[j%len(modes)]
				gs := &game.GameSession{
					ID: acct.GameSessionARN(f.ID, "custom-bench", idString), IDString: idString, Name: "game " + idString,
					FleetID: f.ID, FleetARN: f.ARN, Location: "custom-bench", ComputeName: fmt.Sprintf("compute-%d", j%500),
					CreationTime: now.Add(time.Duration(j) * time.Millisecond), MaximumPlayerSessionCount: 200,
					Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.NoProtection,
					IPAddress: "10.0.0.1", Port: 7000 + j%1000,
					Properties: []game.Property{{Key: "mode", Value: mode}, {Key: "map", Value: fmt.Sprintf("map-%d", j/len(modes)%20)}},
				}
				if err := tx.InsertGameSession(gs); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// ownedBackend is the PostgreSQL variant with fleet ownership.
const ownedBackend = "postgres-owned"

// backends maps each backend to test to its --store value.
func backends(b *testing.B) map[string]string {
	out := map[string]string{"sqlite": ""}
	if dsn := postgresDSN(); dsn != "" {
		out["postgres"] = dsn
		out[ownedBackend] = dsn
	}
	return out
}

func BenchmarkDescribeGameSessions(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			c := newClient(s.url)
			run(b, func(r *rand.Rand) error {
				id := s.ids[r.IntN(len(s.ids))]
				return c.call("DescribeGameSessions", []byte(`{"GameSessionId": "`+id+`"}`))
			})
		})
	}
}

func BenchmarkDescribeGameSessionsFleetPage(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			c := newClient(s.url)
			body := []byte(`{"FleetId": "` + s.fleetID + `", "Limit": 20}`)
			run(b, func(*rand.Rand) error { return c.call("DescribeGameSessions", body) })
		})
	}
}

func BenchmarkSearchSelectiveFilter(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			c := newClient(s.url)
			run(b, func(r *rand.Rand) error {
				body := fmt.Sprintf(`{"FleetId": "%s", "FilterExpression": "gameSessionProperties.map = 'map-%d' AND gameSessionProperties.mode = 'ranked' AND hasAvailablePlayerSessions = true", "Limit": 20}`,
					s.fleetID, r.IntN(20))
				return c.call("SearchGameSessions", []byte(body))
			})
		})
	}
}

func BenchmarkSearchSorted(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			c := newClient(s.url)
			body := []byte(`{"FleetId": "` + s.fleetID + `", "FilterExpression": "hasAvailablePlayerSessions = true", "SortExpression": "creationTimeMillis DESC", "Limit": 20}`)
			run(b, func(*rand.Rand) error { return c.call("SearchGameSessions", body) })
		})
	}
}

func BenchmarkCreatePlayerSession(b *testing.B) {
	for name, storeURL := range backends(b) {
		b.Run(name, func(b *testing.B) {
			s := seed(b, name, storeURL)
			c := newClient(s.url)
			run(b, func(r *rand.Rand) error {
				id := s.ids[r.IntN(len(s.ids))]
				body := fmt.Sprintf(`{"GameSessionId": "%s", "PlayerId": "player-%d"}`, id, r.Uint64())
				return c.call("CreatePlayerSession", []byte(body))
			})
		})
	}
}
