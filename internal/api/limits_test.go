package api_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/wire"
)

// sendHead writes req's request line and headers to a new connection,
// and then the first n bytes of its body; the rest is never sent.
func sendHead(t *testing.T, env *apitest.Env, req *http.Request, n int) net.Conn {
	t.Helper()
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(buf.Bytes(), []byte("\r\n\r\n"))
	c, err := net.Dial("tcp", env.Server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(append(append(head, "\r\n\r\n"...), body[:n]...)); err != nil {
		t.Fatal(err)
	}
	return c
}

// readAnswer reads one answer from c, which the server must give although
// the body was not sent.
func readAnswer(t *testing.T, c net.Conn, p wire.Protocol) *apitest.Response {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the body: %v", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return &apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b.Bytes()}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// padded is an empty input object padded with spaces to n bytes.
func padded(n int) []byte { return append([]byte("{}"), bytes.Repeat([]byte(" "), n-2)...) }

// Bodies read before their signature can be checked share a budget: when
// stalled clients hold it, a large unsigned-hash request gets a 503 in
// its protocol, while ordinary small requests and requests whose
// signature covers a declared payload hash are served.
func TestUnauthenticatedBodiesShareABudget(t *testing.T) {
	env := apitest.Start(t, func(c *server.Config) { c.Limits = server.Limits{UnauthenticatedBodyBytes: 64 << 10} })
	const large = 40 << 10
	stalled := rawCall{op: "ListFleets", body: padded(large)}.request(t, env)
	staller := sendHead(t, env, stalled, 1)

	// The staller holds its share once the server has begun reading its
	// body, which happens on the server's time: until then a large
	// request is still served.
	var r *apitest.Response
	for deadline := time.Now().Add(20 * time.Second); ; {
		r = rawCall{op: "ListFleets", body: padded(large)}.do(t, env)
		if r.Status != http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	m := wantError(t, wire.JSON, r, http.StatusServiceUnavailable, "InternalServiceException")
	if !strings.Contains(m["message"].(string), "unauthenticated") {
		t.Errorf("message %q", m["message"])
	}
	r = rawCall{proto: wire.CBOR, op: "ListFleets", body: append([]byte{0xa0}, make([]byte, large)...)}.do(t, env)
	wantError(t, wire.CBOR, r, http.StatusServiceUnavailable, "InternalServiceException")

	if r := (rawCall{op: "ListFleets"}).do(t, env); r.Status != http.StatusOK {
		t.Errorf("a small request while the budget is spent: %d %s", r.Status, r.Body)
	}
	declared := rawCall{op: "ListFleets", body: padded(large), pre: func(req *http.Request) {
		req.Header.Set("X-Amz-Content-Sha256", sha(padded(large)))
	}}
	if r := declared.do(t, env); r.Status != http.StatusOK {
		t.Errorf("a large request signed over its declared hash: %d %s", r.Status, r.Body)
	}
	staller.Close()
	// The staller's reservation goes once its request ends.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := rawCall{op: "ListFleets", body: padded(large)}.do(t, env)
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the budget was not given back: %d %s", r.Status, r.Body)
		}
	}
}

// What the headers tell is checked before a byte of the body is read: a
// bad signature over a declared hash, an unknown key or a missing
// signature is refused at once, the body still unsent.
func TestRefusedBeforeTheBody(t *testing.T) {
	env := apitest.Start(t)
	body := padded(1 << 20)
	cases := map[string]rawCall{
		"declared hash, wrong secret": {op: "ListFleets", body: body, secret: "wrong", pre: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", sha(body)) }},
		"unknown key":                 {op: "ListFleets", body: body, key: "AKIDUNKNOWN"},
		"expired":                     {op: "ListFleets", body: body, at: time.Now().Add(-time.Hour)},
		"no signature":                {op: "ListFleets", body: body, edit: func(r *http.Request) { r.Header.Del("Authorization") }},
	}
	for name, c := range cases {
		r := readAnswer(t, sendHead(t, env, c.request(t, env), 0), wire.JSON)
		if r.Status != http.StatusForbidden {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	// A declared hash that the body then contradicts is refused too.
	lie := rawCall{op: "ListFleets", pre: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", sha([]byte("{ }"))) }}
	wantError(t, wire.JSON, lie.do(t, env), http.StatusForbidden, "InvalidSignatureException")
	over := rawCall{op: "ListFleets", body: padded(3 << 20)}.request(t, env)
	wantError(t, wire.JSON, readAnswer(t, sendHead(t, env, over, 0), wire.JSON), http.StatusBadRequest, "InvalidRequestException")
}

// A signed 2 MB request of 400,000 bad fleet ids answers a short error
// listing ten; a deeply nested body is refused before decoding.
func TestNoAmplification(t *testing.T) {
	env := apitest.Start(t)
	ids := strings.TrimSuffix(strings.Repeat(`"x",`, 400_000), ",")
	for _, p := range wireProtocols {
		r := rawCall{proto: p, op: "DescribeFleetAttributes", body: bodyIn(t, p, `{"FleetIds": [`+ids+`]}`)}.do(t, env)
		m := wantError(t, p, r, http.StatusBadRequest, "InvalidRequestException")
		msg := m["message"].(string)
		if len(r.Body) > 16<<10 {
			t.Errorf("%v: %d bytes: %.200s", p, len(r.Body), msg)
		}
		// CBOR refuses arrays over 65536 elements while decoding.
		if p == wire.JSON && (!strings.HasPrefix(msg, "400000 validation errors detected") || !strings.HasSuffix(msg, "399990 more not listed")) {
			t.Errorf("%v: %.200s", p, msg)
		}
	}
	deep := `{"FleetIds": ["fleet-1"], "Deep": ` + strings.Repeat("[", 8000) + strings.Repeat("]", 8000) + `}`
	r := rawCall{op: "DescribeFleetAttributes", body: []byte(deep)}.do(t, env)
	m := wantError(t, wire.JSON, r, http.StatusBadRequest, "InvalidRequestException")
	if !strings.Contains(m["message"].(string), "nested deeper than 32 levels") {
		t.Errorf("deep JSON: %s", m["message"])
	}
}
