package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/wire"
)

// syncBuffer is a log sink safe to read while the server writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func logInto(b *syncBuffer) apitest.Option {
	return func(c *server.Config) {
		c.Log = slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

func fixedClock(now func() time.Time) apitest.Option {
	return func(c *server.Config) { c.Now = now }
}

var signatureRE = regexp.MustCompile(`Signature=([0-9a-f]{64})`)

func createLocation(p wire.Protocol, t *testing.T, name string) rawCall {
	return rawCall{proto: p, op: "CreateLocation", body: bodyIn(t, p, `{"LocationName": "`+name+`"}`)}
}

// locationCount lists the locations with valid credentials.
func locationCount(t *testing.T, env *apitest.Env) int {
	t.Helper()
	r := env.CallJSON(t, "ListLocations", `{}`)
	if r.Status != http.StatusOK {
		t.Fatalf("ListLocations: %d %s", r.Status, r.Body)
	}
	locs, _ := r.JSON(t)["Locations"].([]any)
	return len(locs)
}

func TestSigV4Refusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) { testSigV4Refusals(t, opts) })
	}
}

func testSigV4Refusals(t *testing.T, opts []apitest.Option) {
	logs := &syncBuffer{}
	env := apitest.Start(t, append(opts, logInto(logs))...)
	for _, p := range wireProtocols {
		cases := []struct {
			name   string
			edit   func(c *rawCall)
			status int
			code   string
		}{
			{"missing Authorization", func(c *rawCall) {
				c.edit = func(r *http.Request) { r.Header.Del("Authorization") }
			}, 403, "MissingAuthenticationTokenException"},
			{"other scheme", func(c *rawCall) {
				c.edit = func(r *http.Request) { r.Header.Set("Authorization", "Bearer abc") }
			}, 403, "IncompleteSignatureException"},
			{"no Signature", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					h := r.Header.Get("Authorization")
					r.Header.Set("Authorization", h[:strings.Index(h, ", Signature=")])
				}
			}, 403, "IncompleteSignatureException"},
			{"no Credential", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					r.Header.Set("Authorization", "AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature="+strings.Repeat("a", 64))
				}
			}, 403, "IncompleteSignatureException"},
			{"short credential scope", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/gamelift/aws4_request", "", 1))
				}
			}, 403, "IncompleteSignatureException"},
			{"missing X-Amz-Date", func(c *rawCall) {
				c.edit = func(r *http.Request) { r.Header.Del("X-Amz-Date") }
			}, 403, "IncompleteSignatureException"},
			{"wrong secret", func(c *rawCall) { c.secret = "not-the-secret" }, 403, "InvalidSignatureException"},
			{"unknown access key", func(c *rawCall) { c.key = "AKIDUNKNOWN" }, 403, "UnrecognizedClientException"},
			{"tampered body", func(c *rawCall) {
				c.sendBody = bodyIn(t, p, `{"LocationName": "custom-evil"}`)
			}, 403, "InvalidSignatureException"},
			{"content sha256 mismatch", func(c *rawCall) {
				c.pre = func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64)) }
			}, 403, "InvalidSignatureException"},
			{"tampered session token", func(c *rawCall) {
				c.token = "session-token"
				c.edit = func(r *http.Request) { r.Header.Set("X-Amz-Security-Token", "other-token") }
			}, 403, "InvalidSignatureException"},
			{"signature of another region", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/us-west-2/", "/eu-west-1/", 1))
				}
			}, 403, "InvalidSignatureException"},
			{"scoped to another service", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/gamelift/", "/s3/", 1))
				}
			}, 403, "InvalidSignatureException"},
			{"unsigned host", func(c *rawCall) {
				c.edit = func(r *http.Request) {
					r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "host;", "", 1))
				}
			}, 403, "IncompleteSignatureException"},
		}
		for _, tc := range cases {
			t.Run(p.String()+"/"+tc.name, func(t *testing.T) {
				c := createLocation(p, t, "custom-refused")
				tc.edit(&c)
				req := c.request(t, env)
				sig := signatureRE.FindStringSubmatch(req.Header.Get("Authorization"))
				r := env.Do(t, req)
				m := wantError(t, p, r, tc.status, tc.code)
				if sig != nil && strings.Contains(m["message"].(string), sig[1]) {
					t.Errorf("the message repeats the signature: %q", m["message"])
				}
			})
		}
	}
	if n := locationCount(t, env); n != 0 {
		t.Errorf("refused requests created %d locations", n)
	}
	if m := signatureRE.FindString(logs.String()); m != "" {
		t.Errorf("a signature reached the log: %s", m)
	}
	if !strings.Contains(logs.String(), "authentication failed") {
		t.Errorf("refusals were not logged")
	}
}

func TestSigV4Accepts(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) { testSigV4Accepts(t, opts) })
	}
}

func testSigV4Accepts(t *testing.T, opts []apitest.Option) {
	env := apitest.Start(t, opts...)
	n := 0
	for _, p := range wireProtocols {
		cases := []struct {
			name string
			edit func(c *rawCall)
		}{
			{"botocore style", func(c *rawCall) {}},
			{"Go SDK style", func(c *rawCall) { c.goStyle = true }},
			{"session token", func(c *rawCall) { c.token = "FwoGZXIvYXdzEBYaDHRlc3R0b2tlbg==" }},
			{"session token, Go SDK style", func(c *rawCall) { c.token = "tok"; c.goStyle = true }},
			{"matching content sha256", func(c *rawCall) {
				c.pre = func(r *http.Request) {
					r.Header.Set("X-Amz-Content-Sha256", sha256Hex(c.body))
				}
			}},
		}
		for _, tc := range cases {
			t.Run(p.String()+"/"+tc.name, func(t *testing.T) {
				n++
				c := createLocation(p, t, "custom-ok-"+strconv.Itoa(n))
				tc.edit(&c)
				r := c.do(t, env)
				if r.Status != http.StatusOK {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				checkHeaders(t, p, r)
			})
		}
		t.Run(p.String()+"/lowercase host", func(t *testing.T) {
			n++
			c := createLocation(p, t, "custom-ok-"+strconv.Itoa(n))
			r := rawDo(t, env, c.request(t, env))
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
		})
	}
	if got := locationCount(t, env); got != n {
		t.Errorf("%d locations, want %d", got, n)
	}
}

func TestSigV4ClockSkew(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	env := apitest.Start(t, fixedClock(func() time.Time { return now }))
	for _, p := range wireProtocols {
		for _, tc := range []struct {
			offset time.Duration
			ok     bool
			words  string
		}{
			{-16 * time.Minute, false, "Signature expired"},
			{16 * time.Minute, false, "Signature not yet current"},
			{-14 * time.Minute, true, ""},
			{14 * time.Minute, true, ""},
			{-24 * time.Hour, false, "Signature expired"},
		} {
			t.Run(p.String()+"/"+tc.offset.String(), func(t *testing.T) {
				c := rawCall{proto: p, op: "ListLocations", at: now.Add(tc.offset)}
				r := c.do(t, env)
				if tc.ok {
					if r.Status != http.StatusOK {
						t.Fatalf("status %d: %s", r.Status, r.Body)
					}
					return
				}
				m := wantError(t, p, r, 403, "InvalidSignatureException")
				if !strings.Contains(m["message"].(string), tc.words) {
					t.Errorf("message %q does not say %q", m["message"], tc.words)
				}
			})
		}
	}
}

func TestInsecureAnyCredentials(t *testing.T) {
	logs := &syncBuffer{}
	env := apitest.Start(t, logInto(logs), func(c *server.Config) {
		c.Credentials = nil
		c.AnyCredentials = true
	})
	if !strings.Contains(logs.String(), "INSECURE") {
		t.Errorf("no loud warning in the log: %s", logs.String())
	}
	for _, p := range wireProtocols {
		for i, c := range []rawCall{
			{proto: p, op: "ListLocations", key: "anything", secret: "whatever"},
			{proto: p, op: "ListLocations", key: "AKIDOTHER", secret: "x", goStyle: true},
		} {
			if r := c.do(t, env); r.Status != http.StatusOK {
				t.Errorf("%v call %d: status %d: %s", p, i, r.Status, r.Body)
			}
		}
		// An unsigned request (anonymous credentials, as the O3DE gem's
		// client sends to a local endpoint) is served too.
		unsigned := rawCall{proto: p, op: "ListLocations", edit: func(r *http.Request) {
			r.Header.Del("Authorization")
			r.Header.Del("X-Amz-Date")
		}}
		if r := unsigned.do(t, env); r.Status != http.StatusOK {
			t.Errorf("%v unsigned call: status %d: %s", p, r.Status, r.Body)
		}
		garbled := rawCall{proto: p, op: "ListLocations", edit: func(r *http.Request) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 nonsense") }}
		wantError(t, p, garbled.do(t, env), 403, "IncompleteSignatureException")
	}
}

// TestSigningRegion: a request signed correctly, but for another region
// than the service's, is refused as GameLift refuses it; with
// AnySigningRegion it is accepted.
func TestSigningRegion(t *testing.T) {
	strict := apitest.Start(t)
	loose := apitest.Start(t, func(c *server.Config) { c.AnySigningRegion = true })
	for _, p := range wireProtocols {
		c := createLocation(p, t, "custom-region-"+strconv.Itoa(int(p)))
		c.region = "eu-west-1"
		m := wantError(t, p, c.do(t, strict), 403, "InvalidSignatureException")
		if m["message"] != "Credential should be scoped to a valid region, not 'eu-west-1'. " {
			t.Errorf("%s: message %q", p, m["message"])
		}
		if r := c.do(t, loose); r.Status != http.StatusOK {
			t.Errorf("%s with AnySigningRegion: %d %s", p, r.Status, r.Body)
		}
	}
}
