package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anylift/anylift/internal/access"
)

var signTime = time.Date(2026, 11, 27, 13, 45, 7, 0, time.UTC)

// canonicalCase is a request as the server sees it, with the signed
// header list of its Authorization header.
type canonicalCase struct {
	name          string
	method, host  string
	target        string // path and query
	header        http.Header
	contentLength int64
	signed        string
	// fast: the canonical request is built here; otherwise the SDK's
	// signer signs it.
	fast bool
}

func (c canonicalCase) request(t testing.TB) (*http.Request, *Signed, bool) {
	u, err := url.ParseRequestURI(c.target)
	if err != nil {
		return nil, nil, false
	}
	r := &http.Request{Method: c.method, URL: u, Host: c.host, Header: c.header, ContentLength: c.contentLength}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	a := &authHeader{accessKey: "AKIDTEST", date: signTime.Format("20060102"), region: "us-west-2", service: SigningName, signedHeaders: c.signed}
	return r, &Signed{accessKey: a.accessKey, a: a, secret: "secret/with+odd=chars", signTime: signTime}, true
}

func canonicalCases() []canonicalCase {
	json := http.Header{"Content-Type": {"application/x-amz-json-1.1"}, "X-Amz-Target": {"GameLift.SearchGameSessions"},
		"User-Agent": {"Boto3/1.35 md/Botocore#1.35  ua/2.0"}}
	cbor := http.Header{"Accept": {"application/cbor"}, "Amz-Sdk-Invocation-Id": {"0b7f1f6e-3c1d-4f5e-9a55-4a0d5c1e2f3a"},
		"Amz-Sdk-Request": {"attempt=1; max=3"}, "Content-Type": {"application/cbor"}, "Smithy-Protocol": {"rpc-v2-cbor"}}
	with := func(h http.Header, kv ...string) http.Header {
		h = h.Clone()
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	const botocore = "content-type;host;x-amz-date;x-amz-target"
	const goSDK = "accept;amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;smithy-protocol;x-amz-date"
	return []canonicalCase{
		{"botocore", "POST", "127.0.0.1:4000", "/", json, 48, botocore, true},
		{"Go SDK, CBOR", "POST", "127.0.0.1:4000", "/service/GameLift/operation/SearchGameSessions", cbor, 48, goSDK, true},
		{"session token", "POST", "localhost:4000", "/", with(json, "X-Amz-Security-Token", "FwoGZXIvYXdzEBYaDHRlc3R0b2tlbg=="), 48,
			"content-type;host;x-amz-date;x-amz-security-token;x-amz-target", true},
		{"content sha256 signed", "POST", "gamelift.example.com", "/", with(json, "X-Amz-Content-Sha256", strings.Repeat("ab", 32)), 2,
			"content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target", true},
		{"a header of two values", "POST", "127.0.0.1:4000", "/", with(json, "X-Extra", "one", "X-Extra", "two, three"), 2,
			"content-type;host;x-amz-date;x-amz-target;x-extra", true},
		{"a signed header not sent", "POST", "127.0.0.1:4000", "/", json, 2, "content-type;host;x-amz-date;x-amz-target;x-missing", true},
		{"an empty value", "POST", "127.0.0.1:4000", "/", with(json, "X-Empty", ""), 2, "content-type;host;x-amz-date;x-amz-target;x-empty", true},
		{"host in capitals, no port", "POST", "GameLift.Example.COM", "/", json, 2, botocore, true},
		{"port 443", "POST", "example.com:443", "/", json, 2, botocore, true},
		{"only host and date", "POST", "127.0.0.1:4000", "/", json, 2, "host;x-amz-date", true},
		{"path of unreserved characters", "POST", "127.0.0.1:4000", "/a-b/c.d/_e~/", json, 2, botocore, true},
		{"double slash", "POST", "127.0.0.1:4000", "//x//", json, 2, botocore, true},
		{"dot segments", "POST", "127.0.0.1:4000", "/a/../b", json, 2, botocore, true},

		{"query", "POST", "127.0.0.1:4000", "/?b=2&a=1 ", json, 2, botocore, false},
		{"empty query", "POST", "127.0.0.1:4000", "/?", json, 2, botocore, false},
		{"escaped path", "POST", "127.0.0.1:4000", "/service/GameLift/operation/a%2Fb", json, 2, botocore, false},
		{"path with a colon", "POST", "127.0.0.1:4000", "/a:b", json, 2, botocore, false},
		{"port 80", "POST", "example.com:80", "/", json, 2, botocore, false},
		{"empty port", "POST", "example.com:", "/", json, 2, botocore, false},
		{"IPv6 host", "POST", "[::1]:4000", "/", json, 2, botocore, false},
		{"no host", "POST", "", "/", json, 2, botocore, false},
		{"unsorted names", "POST", "127.0.0.1:4000", "/", json, 2, "host;content-type;x-amz-date;x-amz-target", false},
		{"a name twice", "POST", "127.0.0.1:4000", "/", json, 2, "content-type;host;host;x-amz-date;x-amz-target", false},
		{"a name in capitals", "POST", "127.0.0.1:4000", "/", json, 2, "Content-Type;host;x-amz-date;x-amz-target", false},
		{"an empty name", "POST", "127.0.0.1:4000", "/", json, 2, ";content-type;host;x-amz-date;x-amz-target", false},
		{"double space in a value", "POST", "127.0.0.1:4000", "/", with(json, "X-Extra", "a  b"), 2, "content-type;host;x-amz-date;x-amz-target;x-extra", false},
		{"space around a value", "POST", "127.0.0.1:4000", "/", with(json, "X-Extra", " a b\t"), 2, "content-type;host;x-amz-date;x-amz-target;x-extra", false},
		{"content-length of an empty body", "POST", "127.0.0.1:4000", "/", json, 0, "content-length;content-type;host;x-amz-date;x-amz-target", false},
		{"content-length of a chunked body", "POST", "127.0.0.1:4000", "/", json, -1, "content-length;content-type;host;x-amz-date;x-amz-target", false},
		{"token signed, not sent", "POST", "127.0.0.1:4000", "/", json, 2, "content-type;host;x-amz-date;x-amz-security-token;x-amz-target", false},
		{"user-agent signed", "POST", "127.0.0.1:4000", "/", json, 2, "content-type;host;user-agent;x-amz-date;x-amz-target", false},
		{"x-amz-date not signed", "POST", "127.0.0.1:4000", "/", json, 2, "content-type;host;x-amz-target", false},
		{"method in lower case", "post", "127.0.0.1:4000", "/", json, 2, botocore, false},
	}
}

// TestCanonicalMatchesSDK: for every request whose canonical form is
// built here, the signature is the one the SDK's signer computes; the
// others are left to the signer.
func TestCanonicalMatchesSDK(t *testing.T) {
	v := &Verifier{}
	payload := sha256Hex([]byte(`{"FleetId": "fleet-1"}`))
	for _, c := range canonicalCases() {
		t.Run(c.name, func(t *testing.T) {
			r, s, ok := c.request(t)
			if !ok {
				t.Fatalf("target %q does not parse", c.target)
			}
			var got [2 * sha256.Size]byte
			fast := v.canonicalSignature(&got, r, s, payload)
			if fast != c.fast {
				t.Fatalf("built here: %v, want %v", fast, c.fast)
			}
			if !fast {
				return
			}
			want, err := sdkSignature(r, s.a, s.secret, s.signTime, payload)
			if err != nil {
				t.Fatalf("the SDK's signer refuses it: %v", err)
			}
			if string(got[:]) != want {
				t.Errorf("signature %s, the SDK's %s", got, want)
			}
		})
	}
}

// FuzzCanonicalMatchesSDK: whatever the host, path, signed names and
// header values, a request whose canonical form is built here gets the
// signature the SDK's signer computes.
func FuzzCanonicalMatchesSDK(f *testing.F) {
	for _, c := range canonicalCases() {
		f.Add(c.method, c.host, c.target, c.signed, c.header.Get("X-Amz-Target"), c.header.Get("X-Extra"), c.header.Get("X-Amz-Security-Token"), c.contentLength)
	}
	v := &Verifier{}
	payload := sha256Hex(nil)
	f.Fuzz(func(t *testing.T, method, host, target, signed, amzTarget, extra, token string, contentLength int64) {
		h := http.Header{"Content-Type": {"application/x-amz-json-1.1"}, "X-Amz-Target": {amzTarget}, "X-Extra": {extra, amzTarget}}
		if token != "" {
			h["X-Amz-Security-Token"] = []string{token}
		}
		c := canonicalCase{method: method, host: host, target: target, header: h, contentLength: contentLength, signed: signed}
		r, s, ok := c.request(t)
		if !ok {
			return
		}
		var got [2 * sha256.Size]byte
		if !v.canonicalSignature(&got, r, s, payload) {
			return
		}
		want, err := sdkSignature(r, s.a, s.secret, s.signTime, payload)
		if err != nil {
			t.Fatalf("built here, but the SDK's signer refuses it: %v (%+v)", err, c)
		}
		if string(got[:]) != want {
			t.Fatalf("signature %s, the SDK's %s (%+v)", got, want, c)
		}
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keysOf is a keyring whose keys a test changes.
type keysOf struct {
	mu   sync.Mutex
	keys map[string]string
}

func (k *keysOf) Key(id string) (*access.Key, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	secret, ok := k.keys[id]
	if !ok {
		return nil, false
	}
	return &access.Key{ID: id, Secret: secret}, true
}

func (k *keysOf) set(id, secret string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if secret == "" {
		delete(k.keys, id)
		return
	}
	k.keys[id] = secret
}

// signedRequest is a request as the server receives it, signed with the
// SDK's signer by id and secret.
func signedRequest(t *testing.T, target, id, secret string, at time.Time) (*http.Request, []byte) {
	t.Helper()
	body := []byte(`{"Limit": 1}`)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4000"+target, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/x-amz-json-1.1")
	r.Header.Set("X-Amz-Target", "GameLift.ListLocations")
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}, r,
		sha256Hex(body), SigningName, "us-west-2", at)
	if err != nil {
		t.Fatal(err)
	}
	return r, body
}

// TestSigningKeyRotated: a key whose secret changes is verified with the
// new secret from the next request on, and a request signed with the old
// one no longer verifies; a key removed is refused at once. Both for a
// request whose canonical form is built here and for one the SDK's signer
// signs (a query string), whose kept signing key once outlived a rotation.
func TestSigningKeyRotated(t *testing.T) {
	for _, target := range []string{"/", "/?x=1"} {
		t.Run(target, func(t *testing.T) {
			keys := &keysOf{keys: map[string]string{"AKIDROT": "secret-one"}}
			v := &Verifier{Keys: keys, Region: "us-west-2", Now: func() time.Time { return signTime }}
			verify := func(secret string) *authError {
				r, body := signedRequest(t, target, "AKIDROT", secret, signTime)
				_, _, aerr := v.Verify(r, body)
				return aerr
			}
			if aerr := verify("secret-one"); aerr != nil {
				t.Fatalf("before rotation: %v", aerr)
			}
			keys.set("AKIDROT", "secret-two")
			if aerr := verify("secret-one"); aerr == nil || aerr.code != "InvalidSignatureException" {
				t.Errorf("the old secret after rotation: %v", aerr)
			}
			if aerr := verify("secret-two"); aerr != nil {
				t.Errorf("the new secret after rotation: %v", aerr)
			}
			keys.set("AKIDROT", "")
			if aerr := verify("secret-two"); aerr == nil || aerr.code != "UnrecognizedClientException" {
				t.Errorf("a removed key: %v", aerr)
			}
			keys.set("AKIDROT", "secret-one")
			if aerr := verify("secret-two"); aerr == nil || aerr.code != "InvalidSignatureException" {
				t.Errorf("the second secret once the first is back: %v", aerr)
			}
			if aerr := verify("secret-one"); aerr != nil {
				t.Errorf("the first secret back: %v", aerr)
			}
		})
	}
}

// TestSigningKeysBounded: the signing keys kept stay within
// maxSigningKeys, however many scopes requests name, and each still
// verifies.
func TestSigningKeysBounded(t *testing.T) {
	keys := &keysOf{keys: map[string]string{"AKIDMANY": "secret"}}
	v := &Verifier{Keys: keys, Now: func() time.Time { return signTime }}
	for i := range maxSigningKeys + 10 {
		body := []byte(`{}`)
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4000/", bytes.NewReader(body))
		region := "region-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i >> 8), byte(i)})
		err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDMANY", SecretAccessKey: "secret"}, r,
			sha256Hex(body), SigningName, region, signTime)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, aerr := v.Verify(r, body); aerr != nil {
			t.Fatalf("region %s: %v", region, aerr)
		}
		if n := v.keys.len(); n > maxSigningKeys {
			t.Fatalf("%d signing keys kept", n)
		}
	}
}

// TestSigningKeysConcurrent: requests of several keys verified at once
// share the kept signing keys and their HMACs safely (run with -race).
func TestSigningKeysConcurrent(t *testing.T) {
	keys := &keysOf{keys: map[string]string{"AKIDONE": "secret-one", "AKIDTWO": "secret-two"}}
	v := &Verifier{Keys: keys, Region: "us-west-2", Now: func() time.Time { return signTime }}
	type signed struct {
		r    *http.Request
		body []byte
	}
	var reqs []signed
	for i := range 16 {
		id, secret := "AKIDONE", "secret-one"
		if i%2 == 1 {
			id, secret = "AKIDTWO", "secret-two"
		}
		r, body := signedRequest(t, "/", id, secret, signTime)
		reqs = append(reqs, signed{r, body})
	}
	var wg sync.WaitGroup
	for _, s := range reqs {
		wg.Go(func() {
			for range 50 {
				if _, _, aerr := v.Verify(s.r, s.body); aerr != nil {
					t.Error(aerr)
					return
				}
			}
		})
	}
	wg.Wait()
}
