package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/server"
)

// TestThrottling: each key has its own token bucket, filled at the rate
// and holding the burst; a request beyond it answers ThrottlingException
// (400) in both protocols, which the AWS SDKs treat as a throttle and
// retry by themselves. Only requests whose signature verified count. The
// server's clock is an input: nothing here waits.
func TestThrottling(t *testing.T) {
	f := &files{t: t, dir: t.TempDir()}
	creds := f.write("credentials", "AKIDSLOW secret-slow - rate=1 burst=2\nAKIDFREE secret-free - rate=0\nAKIDDEFAULT secret-default\n")
	clk := &fleettest.Clock{}
	clk.Set(time.Now().UTC())
	e := apitest.Start(t, apitest.WithCredentialsFile(creds), func(c *server.Config) {
		c.Now = clk.Now
		c.RateLimit = access.Rate{PerSecond: 10, Burst: 3}
	})
	call := func(key, secret string) *apitest.Response {
		return e.CallJSONAs(t, key, secret, "ListFleets", `{}`)
	}
	count := func(key, secret string, n int) (ok, throttled int) {
		t.Helper()
		for range n {
			r := call(key, secret)
			switch {
			case r.Status == 200:
				ok++
			case r.Status == http.StatusBadRequest && r.ErrorType(t) == "ThrottlingException" && r.Header.Get("X-Amzn-Errortype") == "ThrottlingException":
				if msg, _ := r.JSON(t)["message"].(string); msg != "Rate exceeded" {
					t.Errorf("message %q", msg)
				}
				throttled++
			default:
				t.Fatalf("%s: %d %s", key, r.Status, r.Body)
			}
		}
		return ok, throttled
	}
	// Bad signatures for a key do not spend its tokens.
	for range 5 {
		if r := call("AKIDSLOW", "wrong-secret"); r.ErrorType(t) != "InvalidSignatureException" {
			t.Fatalf("bad signature: %d %s", r.Status, r.Body)
		}
	}
	if ok, thr := count("AKIDSLOW", "secret-slow", 4); ok != 2 || thr != 2 {
		t.Errorf("the key's own burst of 2: %d ok, %d throttled", ok, thr)
	}
	if ok, thr := count("AKIDDEFAULT", "secret-default", 5); ok != 3 || thr != 2 {
		t.Errorf("the default burst of 3: %d ok, %d throttled", ok, thr)
	}
	if ok, thr := count(apitest.AccessKey, apitest.SecretKey, 5); ok != 3 || thr != 2 {
		t.Errorf("a --access-key key, the default burst of 3: %d ok, %d throttled", ok, thr)
	}
	if ok, _ := count("AKIDFREE", "secret-free", 20); ok != 20 {
		t.Errorf("a key with rate=0: %d of 20 ok", ok)
	}
	// The tokens come back with time, at the key's rate.
	clk.Set(clk.Now().Add(time.Second))
	if ok, thr := count("AKIDSLOW", "secret-slow", 3); ok != 1 || thr != 2 {
		t.Errorf("one second later, at 1/s: %d ok, %d throttled", ok, thr)
	}

	// CBOR through the Go SDK: the same error, which the SDK's retryer
	// counts as a throttle (it retries it with backoff; this client makes
	// one attempt).
	_, err := e.ClientAs("AKIDSLOW", "secret-slow").ListFleets(context.Background(), &gamelift.ListFleetsInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ThrottlingException" {
		t.Fatalf("CBOR: %v", err)
	}
	if retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) != aws.TrueTernary {
		t.Errorf("the Go SDK does not see %v as a throttle", err)
	}
	if !retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err).Bool() {
		t.Errorf("the Go SDK would not retry %v", err)
	}
}
