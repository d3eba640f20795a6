package api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/fxamacker/cbor/v2"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/wire"
)

// rawCall is one hand-built control-plane request, signed the way a real
// client signs it. The zero value of each field means "as a client would".
type rawCall struct {
	proto  wire.Protocol
	op     string
	body   []byte // nil: an empty object ({} or a0)
	key    string // access key; apitest.AccessKey when empty
	secret string // secret; apitest.SecretKey when empty
	at     time.Time
	token  string // session token, signed as x-amz-security-token
	region string // signing region; apitest.Region when empty
	// goStyle signs as the AWS SDK for Go v2 does: content-length, accept,
	// amz-sdk-* and smithy-protocol are all signed. Otherwise the request
	// is signed as botocore signs (content-type;host;x-amz-date;x-amz-target)
	// and amz-sdk-* and User-Agent are added after signing.
	goStyle bool
	// pre changes the request before signing.
	pre func(r *http.Request)
	// edit changes the request after signing (to tamper with it).
	edit func(r *http.Request)
	// sendBody replaces the body after signing.
	sendBody []byte
}

// request builds and signs c against env.
func (c rawCall) request(t testing.TB, env *apitest.Env) *http.Request {
	t.Helper()
	body := c.body
	if body == nil {
		body = []byte("{}")
		if c.proto == wire.CBOR {
			body = []byte{0xa0}
		}
	}
	url := env.URL + "/"
	if c.proto == wire.CBOR {
		url = env.URL + "/service/GameLift/operation/" + c.op
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.proto == wire.CBOR {
		req.Header.Set("Content-Type", "application/cbor")
		req.Header.Set("Smithy-Protocol", "rpc-v2-cbor")
		req.Header.Set("Accept", "application/cbor")
	} else {
		req.Header.Set("X-Amz-Target", "GameLift."+c.op)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	}
	if c.goStyle {
		req.Header.Set("Amz-Sdk-Invocation-Id", "3b0c7d4e-8a47-4e47-9b8e-6f1c2d3e4f50")
		req.Header.Set("Amz-Sdk-Request", "attempt=1; max=3")
	}
	if c.pre != nil {
		c.pre(req)
	}
	c.sign(t, req, body)
	if !c.goStyle {
		req.Header.Set("Amz-Sdk-Invocation-Id", "3b0c7d4e-8a47-4e47-9b8e-6f1c2d3e4f50")
		req.Header.Set("Amz-Sdk-Request", "attempt=1")
	}
	req.Header.Set("User-Agent", "anylift-test/1.0")
	if c.sendBody != nil {
		req.Body = io.NopCloser(bytes.NewReader(c.sendBody))
		req.ContentLength = int64(len(c.sendBody))
	}
	if c.edit != nil {
		c.edit(req)
	}
	return req
}

func (c rawCall) sign(t testing.TB, req *http.Request, body []byte) {
	t.Helper()
	key, secret := c.key, c.secret
	if key == "" {
		key = apitest.AccessKey
	}
	if secret == "" {
		secret = apitest.SecretKey
	}
	at := c.at
	if at.IsZero() {
		at = time.Now()
	}
	sum := sha256.Sum256(body)
	cl := req.ContentLength
	if !c.goStyle {
		req.ContentLength = 0 // botocore does not sign Content-Length
	}
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, SessionToken: c.token}
	region := c.region
	if region == "" {
		region = apitest.Region
	}
	err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "gamelift", region, at)
	req.ContentLength = cl
	if err != nil {
		t.Fatal(err)
	}
}

// do sends c to env.
func (c rawCall) do(t testing.TB, env *apitest.Env) *apitest.Response {
	t.Helper()
	return env.Do(t, c.request(t, env))
}

// rawDo writes req to env's listener byte for byte, with header names in
// lower case, as the CRT signer of boto3 1.26 sends "host:".
func rawDo(t testing.TB, env *apitest.Env, req *http.Request) *apitest.Response {
	t.Helper()
	conn, err := net.Dial("tcp", env.Server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body, _ := io.ReadAll(req.Body)
	var b strings.Builder
	b.WriteString("POST " + req.URL.RequestURI() + " HTTP/1.1\r\n")
	b.WriteString("host: " + req.Host + "\r\n")
	for name, vs := range req.Header {
		for _, v := range vs {
			b.WriteString(strings.ToLower(name) + ": " + v + "\r\n")
		}
	}
	b.WriteString("content-length: " + strconv.Itoa(len(body)) + "\r\nconnection: close\r\n\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	conn.Write(body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return &apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
}

// errorBody decodes an error answer in protocol p.
func errorBody(t testing.TB, p wire.Protocol, r *apitest.Response) map[string]any {
	t.Helper()
	m := map[string]any{}
	var err error
	if p == wire.CBOR {
		err = cborMaps.Unmarshal(r.Body, &m)
	} else {
		err = json.Unmarshal(r.Body, &m)
	}
	if err != nil {
		t.Fatalf("error body is not a %v map: %v: %q", p, err, r.Body)
	}
	return m
}

// wantError checks that r is the error code with HTTP status, in protocol
// p, with the headers and body shape every client needs.
func wantError(t testing.TB, p wire.Protocol, r *apitest.Response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %d, want %d (body %q)", r.Status, status, r.Body)
	}
	checkHeaders(t, p, r)
	m := errorBody(t, p, r)
	if m["__type"] != code {
		t.Errorf("__type = %v, want %s", m["__type"], code)
	}
	msg, _ := m["message"].(string)
	if msg == "" || m["Message"] != msg {
		t.Errorf("message = %q, Message = %q: want both, equal and not empty", m["message"], m["Message"])
	}
	return m
}

// checkHeaders checks the headers every answer in protocol p carries.
func checkHeaders(t testing.TB, p wire.Protocol, r *apitest.Response) {
	t.Helper()
	if r.Header.Get("X-Amzn-Requestid") == "" {
		t.Errorf("no x-amzn-RequestId header")
	}
	if got := r.Header.Get("Content-Type"); got != p.ContentType() {
		t.Errorf("Content-Type = %q, want %q", got, p.ContentType())
	}
	sp := r.Header.Get("Smithy-Protocol")
	if p == wire.CBOR && sp != "rpc-v2-cbor" {
		t.Errorf("smithy-protocol = %q, want rpc-v2-cbor", sp)
	}
	if p == wire.JSON && sp != "" {
		t.Errorf("smithy-protocol = %q on a JSON answer", sp)
	}
	if r.Header.Get("X-Amzn-Query-Error") != "" {
		t.Errorf("x-amzn-query-error must never be sent")
	}
}

var wireProtocols = []wire.Protocol{wire.JSON, wire.CBOR}

// cborBody encodes v as a CBOR request body.
func cborBody(t testing.TB, v any) []byte {
	t.Helper()
	b, err := cbor.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bodyIn encodes a JSON object text as a body in protocol p.
func bodyIn(t testing.TB, p wire.Protocol, jsonText string) []byte {
	t.Helper()
	if p == wire.JSON {
		return []byte(jsonText)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(jsonText))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return cborBody(t, numbersToCBOR(v))
}

func numbersToCBOR(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToCBOR(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToCBOR(e)
		}
	}
	return v
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cborMaps decodes nested CBOR maps as map[string]any, like encoding/json.
var cborMaps = mustMode(cbor.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any{})}.DecMode())

func mustMode[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
