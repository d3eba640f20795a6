package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
)

// BenchmarkAccessCost is what the access checks add to one request, in
// process and without the network, so that it shows on a busy machine:
// a signed DescribeGameSessions of an empty fleet through the API handler
// with no rate limiter and a key without a policy ("open"), with the
// rate limiter ("limited", at a rate that refuses nothing), and with a
// key whose policy of three statements is evaluated on the fleet's ARN
// ("policy"). Compare allocs/op and cpu-ns/op (the process's CPU time per
// request, which other work on the machine disturbs less than ns/op).
//
//	go test ./internal/api -run '^$' -bench AccessCost -benchmem -count 5
func BenchmarkAccessCost(b *testing.B) {
	policy := `{"Statement": [
		{"Effect": "Allow", "Action": ["gamelift:Describe*", "gamelift:List*"], "Resource": "*"},
		{"Effect": "Allow", "Action": "gamelift:CreateGameSession", "Resource": "arn:aws:gamelift:*:*:fleet/*"},
		{"Effect": "Deny", "Action": "gamelift:Delete*", "Resource": "*"}]}`
	p, err := access.ParsePolicy([]byte(policy), server.Actions())
	if err != nil {
		b.Fatal(err)
	}
	keys, _ := access.NewSet(&access.Key{ID: apitest.AccessKey, Secret: apitest.SecretKey},
		&access.Key{ID: "AKIDPOLICY", Secret: "secret-policy", Policy: p})
	e := apitest.Start(b)
	fleet := apitest.AnywhereFleet(b, e.Client(), "custom-bench", "bench")
	svc := e.Server.Service()
	body := []byte(`{"FleetId": "` + fleet + `", "Limit": 20}`)
	signed := func(key, secret string) *http.Request {
		req := e.NewJSONRequest(b, "DescribeGameSessions", body)
		apitest.Sign(b, req, key, secret, time.Now())
		return req
	}
	verifier := &api.Verifier{Keys: keys, Region: apitest.Region}
	limiter := access.NewLimiter(access.Rate{PerSecond: access.MaxRate, Burst: access.MaxBurst}, nil)
	for _, tc := range []struct {
		name string
		opts api.Options
		req  *http.Request
	}{
		{"open", api.Options{Verifier: verifier}, signed(apitest.AccessKey, apitest.SecretKey)},
		{"limited", api.Options{Verifier: verifier, Limiter: limiter}, signed(apitest.AccessKey, apitest.SecretKey)},
		{"policy", api.Options{Verifier: verifier, Limiter: limiter}, signed("AKIDPOLICY", "secret-policy")},
	} {
		h := api.New(svc, e.Server.Sessions(), e.Server.Queues(), e.Server.FlexMatch(), e.Server.Containers(), e.Server.Computes(), e.Server.Processes(), tc.opts)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				req := tc.req.Clone(tc.req.Context())
				req.Body = io.NopCloser(bytes.NewReader(body))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system, in
// nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
