package bench

// The queue placement benchmark: StartGameSessionPlacement through one
// queue onto 1,000+ Go server SDK processes in three custom locations.
//
//	go test ./internal/bench -run '^$' -bench QueuePlacement -benchtime 2000x
//
// Results, method and machine are in docs/benchmarks.md ("Queue placement").

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	gl "github.com/anylift/anylift/sdk/server"
)

// queueLocations are the custom locations the queue benchmark's fleet
// spans; its computes are spread evenly over them.
var queueLocations = []string{"custom-q1", "custom-q2", "custom-q3"}

type queueEnv struct {
	fleet *benchFleet
	pool  *pool
	queue string // the queue's name; "bench" when empty
}

var (
	queueMu   sync.Mutex
	queueEnvs = map[string]*queueEnv{}
)

func queueBenchEnv(b *testing.B, st procStore) *queueEnv {
	queueMu.Lock()
	defer queueMu.Unlock()
	if e, ok := queueEnvs[st.name]; ok {
		return e
	}
	raiseFileLimit(b)
	srv := startProcServer(b, st.url, st.sync)
	f := newQueueFleet(b, srv.URL(), 3*len(queueLocations))
	p := newPool(f, "queue-"+st.name)
	p.byName = true
	e := &queueEnv{fleet: f, pool: p}
	queueEnvs[st.name] = e
	return e
}

// newQueueFleet creates the three locations, an Anywhere fleet in all of
// them, n computes spread over them, and the queue "bench" with the fleet
// as its destination and a latency policy.
func newQueueFleet(tb testing.TB, url string, n int) *benchFleet {
	return newNamedQueueFleet(tb, url, n, "bench", true)
}

// newNamedQueueFleet is newQueueFleet with the queue named queue, creating
// the locations only when asked (they exist once per store).
func newNamedQueueFleet(tb testing.TB, url string, n int, queue string, withLocations bool) *benchFleet {
	c := newClient(url)
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	var locs []map[string]string
	for _, l := range queueLocations {
		if withLocations {
			must(c.do("CreateLocation", []byte(`{"LocationName": "`+l+`"}`), nil))
		}
		locs = append(locs, map[string]string{"Location": l})
	}
	body, _ := json.Marshal(map[string]any{"Name": "queue-" + queue, "ComputeType": "ANYWHERE", "Locations": locs})
	var fl struct{ FleetAttributes struct{ FleetId string } }
	must(c.do("CreateFleet", body, &fl))
	f := &benchFleet{URL: url, FleetID: fl.FleetAttributes.FleetId}
	for i := range n {
		name, loc := fmt.Sprintf("%s-host-%d", queue, i), queueLocations[i%len(queueLocations)]
		must(c.do("RegisterCompute", fmt.Appendf(nil, `{"FleetId": %q, "ComputeName": %q, "Location": %q, "IpAddress": "10.0.1.%d"}`,
			f.FleetID, name, loc, i+1), nil))
		var tok struct{ AuthToken string }
		must(c.do("GetComputeAuthToken", fmt.Appendf(nil, `{"FleetId": %q, "ComputeName": %q}`, f.FleetID, name), &tok))
		f.Computes = append(f.Computes, compute{Name: name, Token: tok.AuthToken})
	}
	must(c.do("CreateGameSessionQueue", fmt.Appendf(nil, `{"Name": %q, "Destinations": [{"DestinationArn": %q}],
		"PlayerLatencyPolicies": [{"MaximumIndividualPlayerLatencyMilliseconds": 150}]}`, queue, f.FleetID), nil))
	return f
}

var placementSeq atomic.Int64

// BenchmarkQueuePlacement measures StartGameSessionPlacement (signed JSON
// 1.1, two players' latencies to the three locations, one desired player
// session) until the placement is FULFILLED: the moment the hosting
// process's ActivateGameSession is answered, which is the commit that
// makes the session ACTIVE, reserves the seat, fulfils the placement and
// writes its event. Every placement is checked FULFILLED afterwards.
func BenchmarkQueuePlacement(b *testing.B) {
	for _, st := range procStores() {
		b.Run(st.name, func(b *testing.B) {
			e := queueBenchEnv(b, st)
			e.pool.fill(b, MinIdleProcesses+b.N, 32)
			connected := len(e.pool.idle)
			c := newClient(e.fleet.URL)
			var mu sync.Mutex
			var used []*gl.Process
			var ids []string
			run(b, func(r *rand.Rand) error {
				id := fmt.Sprintf("bench-%s-%d", st.name, placementSeq.Add(1))
				p, err := e.placeOnQueue(c, r, id)
				mu.Lock()
				ids = append(ids, id)
				if p != nil {
					used = append(used, p)
				}
				mu.Unlock()
				return err
			})
			b.ReportMetric(float64(connected), "procs")
			checkFulfilled(b, c, ids)
			e.pool.retire(used, 32)
		})
	}
}

// placeOnQueue starts placement id and waits until it is fulfilled.
func (e *queueEnv) placeOnQueue(c *client, r *rand.Rand, id string) (*gl.Process, error) {
	var lat []map[string]any
	for _, player := range []string{"a", "b"} {
		for _, l := range queueLocations {
			lat = append(lat, map[string]any{"PlayerId": player, "RegionIdentifier": l, "LatencyInMilliseconds": 10 + r.IntN(100)})
		}
	}
	queue := e.queue
	if queue == "" {
		queue = "bench"
	}
	body, _ := json.Marshal(map[string]any{"PlacementId": id, "GameSessionQueueName": queue, "GameSessionName": id,
		"MaximumPlayerSessionCount": 8, "PlayerLatencies": lat,
		"DesiredPlayerSessions": []map[string]string{{"PlayerId": "a", "PlayerData": "x"}}})
	if err := c.do("StartGameSessionPlacement", body, nil); err != nil {
		return nil, err
	}
	return e.pool.awaitActive(id)
}

// checkFulfilled fails the benchmark unless every placement is FULFILLED.
func checkFulfilled(b *testing.B, c *client, ids []string) {
	for _, id := range ids {
		var out struct{ GameSessionPlacement struct{ Status string } }
		if err := c.do("DescribeGameSessionPlacement", []byte(`{"PlacementId": "`+id+`"}`), &out); err != nil {
			b.Fatal(err)
		}
		if s := out.GameSessionPlacement.Status; s != "FULFILLED" {
			b.Fatalf("placement %s is %s", id, s)
		}
	}
}
