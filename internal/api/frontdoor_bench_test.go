package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// BenchmarkFrontDoor is what the API handler spends on each of the read
// requests of internal/bench, in process and without the network, so
// that it shows on a busy machine: the same signed requests (as botocore
// signs them, the rate limiter on) over a fleet of 2,000 ACTIVE sessions
// with the benchmark's two properties. Compare allocs/op and cpu-ns/op.
//
//	go test ./internal/api -run '^$' -bench FrontDoor -benchmem -count 3
func BenchmarkFrontDoor(b *testing.B) {
	e := apitest.Start(b)
	fleet := apitest.AnywhereFleet(b, e.Client(), "custom-bench", "bench")
	ids := seedSessions(b, e.Server.Store(), fleet, 2000)
	keys := access.Static(map[string]string{apitest.AccessKey: apitest.SecretKey})
	h := api.New(e.Server.Service(), e.Server.Sessions(), e.Server.Queues(), e.Server.FlexMatch(), e.Server.Containers(), e.Server.Computes(), e.Server.Processes(), api.Options{
		Verifier: &api.Verifier{Keys: keys, Region: apitest.Region},
		Limiter:  access.NewLimiter(access.Rate{PerSecond: access.MaxRate, Burst: access.MaxBurst}, nil),
	})
	for _, tc := range []struct{ name, op, body string }{
		{"describe-id", "DescribeGameSessions", `{"GameSessionId": "` + ids[len(ids)/2] + `"}`},
		{"fleet-page", "DescribeGameSessions", `{"FleetId": "` + fleet + `", "Limit": 20}`},
		{"search-sorted", "SearchGameSessions", `{"FleetId": "` + fleet + `", "FilterExpression": "hasAvailablePlayerSessions = true", "SortExpression": "creationTimeMillis DESC", "Limit": 20}`},
		{"search-selective", "SearchGameSessions", `{"FleetId": "` + fleet + `", "FilterExpression": "gameSessionProperties.map = 'map-7' AND gameSessionProperties.mode = 'ranked' AND hasAvailablePlayerSessions = true", "Limit": 20}`},
	} {
		body := []byte(tc.body)
		req := e.NewJSONRequest(b, tc.op, body)
		apitest.Sign(b, req, apitest.AccessKey, apitest.SecretKey, time.Now())
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				r := req.Clone(req.Context())
				r.Body = io.NopCloser(bytes.NewReader(body))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"GameSessions":[{`)) {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// seedSessions inserts n ACTIVE game sessions into fleet, in its one
// location custom-bench, as internal/bench seeds them, and returns their
// ids.
func seedSessions(b *testing.B, st store.Store, fleetID string, n int) []string {
	acct := game.Account{Region: apitest.Region, ID: "123456789012"}
	now := time.Now().UTC().Truncate(time.Millisecond)
	modes := []string{"ranked", "casual", "ffa", "ctf"}
	var ids []string
	err := st.Update(context.Background(), func(tx store.Tx) error {
		for j := range n {
			idString := fmt.Sprintf("gsess-bench-%06d", j)
			gs := &game.GameSession{
				ID: acct.GameSessionARN(fleetID, "custom-bench", idString), IDString: idString, Name: "game " + idString,
				FleetID: fleetID, FleetARN: acct.FleetARN(fleetID), Location: "custom-bench", ComputeName: fmt.Sprintf("compute-%d", j%500),
				CreationTime: now.Add(time.Duration(j) * time.Millisecond), MaximumPlayerSessionCount: 200,
				Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll, ProtectionPolicy: game.NoProtection,
				IPAddress: "10.0.0.1", Port: 7000 + j%1000,
				Properties: []game.Property{{Key: "mode", Value: modes[j%len(modes)]}, {Key: "map", Value: fmt.Sprintf("map-%d", j/len(modes)%20)}},
			}
			ids = append(ids, gs.ID)
			if err := tx.InsertGameSession(gs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return ids
}
