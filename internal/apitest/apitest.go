// Package apitest starts the real Anylift server for tests, on 127.0.0.1:0
// with a temporary SQLite store (or a fresh PostgreSQL schema when
// ANYLIFT_TEST_POSTGRES is set and the test asks for it), and gives real
// clients for it: the AWS SDK for Go v2 (CBOR) and hand-signed AWS JSON 1.1.
package apitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/storetestenv"
)

// Credentials the test server accepts.
const (
	AccessKey = "AKIDANYLIFTTEST"
	SecretKey = "anylift-test-secret"
	Region    = "us-west-2"
)

// Env is a running server and its clients.
type Env struct {
	Server *server.Server
	URL    string
	Config server.Config
}

// Option changes the server's configuration before it starts.
type Option func(*server.Config)

// WithPostgres runs the server on a fresh PostgreSQL schema when
// ANYLIFT_TEST_POSTGRES is set (and fails under CI=true when it is not).
func WithPostgres(dsn string) Option {
	return func(c *server.Config) { c.Store = dsn }
}

// Start starts a server for the test and stops it at cleanup.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	cfg := server.Config{
		Listen:      "127.0.0.1:0",
		DataDir:     t.TempDir(),
		Region:      Region,
		AccountID:   "123456789012",
		Credentials: map[string]string{AccessKey: SecretKey},
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("starting server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing server: %v", err)
		}
	})
	return &Env{Server: srv, URL: srv.URL(), Config: cfg}
}

// Backends returns the server options of every store backend to test:
// SQLite always, PostgreSQL when ANYLIFT_TEST_POSTGRES holds a DSN.
func Backends(t *testing.T) map[string][]Option {
	out := map[string][]Option{"sqlite": nil}
	if dsn := storetestenv.PostgresDSN(t); dsn != "" {
		out["postgres"] = []Option{func(c *server.Config) { c.Store = storetestenv.FreshSchema(t, dsn) }}
	}
	return out
}

// BackendsOwned is Backends, with a third where PostgreSQL is there: one
// node with fleet ownership, which holds its fleets in memory, decides
// their claims and seats there and commits its writes in groups.
func BackendsOwned(t *testing.T) map[string][]Option {
	out := Backends(t)
	if pg, ok := out["postgres"]; ok {
		out["postgres-owned"] = append(slices.Clip(pg), func(c *server.Config) {
			c.FleetOwnership, c.NodeListen, c.NodeSecret = server.OwnershipOn, "127.0.0.1:0", "apitest-node-secret-0123456789"
		})
	}
	return out
}

// WithCredentialsFile has the server read more keys, with their rights,
// from the credentials file at path.
func WithCredentialsFile(path string) Option {
	return func(c *server.Config) { c.CredentialsFile = path }
}

// Client is the AWS SDK for Go v2 GameLift client, speaking CBOR to e.
func (e *Env) Client() *gamelift.Client { return e.ClientAs(AccessKey, SecretKey) }

// ClientAs is Client signing with another key pair.
func (e *Env) ClientAs(accessKey, secretKey string) *gamelift.Client {
	return gamelift.New(gamelift.Options{
		Region:           Region,
		BaseEndpoint:     aws.String(e.URL),
		Credentials:      credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		RetryMaxAttempts: 1,
	})
}

// Response is a raw answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a JSON object.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response body is not JSON: %v: %q", err, r.Body)
	}
	return m
}

// ErrorType is the __type of an error body.
func (r *Response) ErrorType(t testing.TB) string {
	t.Helper()
	v, _ := r.JSON(t)["__type"].(string)
	return v
}

// CallJSON sends op as AWS JSON 1.1, signed with the test credentials, and
// returns the raw answer. body may be a string of JSON or any value.
func (e *Env) CallJSON(t testing.TB, op string, body any) *Response {
	t.Helper()
	return e.CallJSONAs(t, AccessKey, SecretKey, op, body)
}

// CallJSONAs is CallJSON signing with another key pair.
func (e *Env) CallJSONAs(t testing.TB, accessKey, secretKey, op string, body any) *Response {
	t.Helper()
	req := e.NewJSONRequest(t, op, body)
	Sign(t, req, accessKey, secretKey, time.Now())
	return e.Do(t, req)
}

// NewJSONRequest builds an unsigned JSON 1.1 request, as botocore would.
func (e *Env) NewJSONRequest(t testing.TB, op string, body any) *http.Request {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	case nil:
		raw = []byte("{}")
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, e.URL+"/", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", "GameLift."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	return req
}

// Sign signs req with SigV4 for GameLift at time at, the way botocore does
// (content-type, host, x-amz-date, x-amz-target).
func Sign(t testing.TB, req *http.Request, accessKey, secretKey string, at time.Time) {
	t.Helper()
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	sum := sha256.Sum256(body)
	cl := req.ContentLength
	req.ContentLength = 0 // botocore does not sign Content-Length
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey},
		req, hex.EncodeToString(sum[:]), "gamelift", Region, at)
	req.ContentLength = cl
	if err != nil {
		t.Fatal(err)
	}
}

// Do sends req and reads the whole answer.
func (e *Env) Do(t testing.TB, req *http.Request) *Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
