package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/smithy-go"
	"github.com/fxamacker/cbor/v2"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/wire"
)

func TestSuccessAnswers(t *testing.T) {
	env := apitest.Start(t)
	for _, p := range wireProtocols {
		t.Run(p.String(), func(t *testing.T) {
			r := createLocation(p, t, "custom-"+strings.ToLower(p.String()[:4])).do(t, env)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d, want exactly 200: %s", r.Status, r.Body)
			}
			checkHeaders(t, p, r)
			m := errorBody(t, p, r) // any map will do
			loc, _ := m["Location"].(map[string]any)
			if loc["LocationName"] == nil || loc["LocationArn"] == nil {
				t.Errorf("Location = %v", m["Location"])
			}
			if p == wire.CBOR && r.Body[0] != 0xa1 {
				t.Errorf("CBOR body starts %#x, want a definite-length map of one pair", r.Body[0])
			}
		})
	}
}

func TestEmptyBodies(t *testing.T) {
	env := apitest.Start(t)
	for _, p := range wireProtocols {
		for _, body := range [][]byte{{}, []byte(" "), nil} {
			c := rawCall{proto: p, op: "ListLocations", body: body}
			if body == nil {
				c.body = nil // {} or a0
			}
			r := c.do(t, env)
			if r.Status != http.StatusOK {
				t.Errorf("%v body %q: status %d: %s", p, body, r.Status, r.Body)
			}
			checkHeaders(t, p, r)
		}
	}
	// A required member is still required when the body is empty.
	for _, p := range wireProtocols {
		r := rawCall{proto: p, op: "CreateLocation", body: []byte{}}.do(t, env)
		m := wantError(t, p, r, 400, "InvalidRequestException")
		if !strings.Contains(m["message"].(string), "locationName") {
			t.Errorf("message %q does not name locationName", m["message"])
		}
	}
}

func TestCBORIndefiniteLengths(t *testing.T) {
	env := apitest.Start(t)
	// {_ "LocationName": (_ "custom-" "indef"), "Tags": [_ {_ "Key": "k", "Value": "v"}]}
	body := []byte{0xbf, 0x6c}
	body = append(body, "LocationName"...)
	body = append(body, 0x7f, 0x67)
	body = append(body, "custom-"...)
	body = append(body, 0x65)
	body = append(body, "indef"...)
	body = append(body, 0xff, 0x64)
	body = append(body, "Tags"...)
	body = append(body, 0x9f, 0xbf, 0x63)
	body = append(body, "Key"...)
	body = append(body, 0x61, 'k', 0x65)
	body = append(body, "Value"...)
	body = append(body, 0x61, 'v', 0xff, 0xff, 0xff)
	r := rawCall{proto: wire.CBOR, op: "CreateLocation", body: body}.do(t, env)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, errorBody(t, wire.CBOR, r))
	}
	var out struct{ Location struct{ LocationName string } }
	if err := cbor.Unmarshal(r.Body, &out); err != nil || out.Location.LocationName != "custom-indef" {
		t.Errorf("LocationName = %q (%v), want custom-indef", out.Location.LocationName, err)
	}
}

func TestUnknownAndUnservedOperations(t *testing.T) {
	env := apitest.Start(t)
	for _, p := range wireProtocols {
		r := rawCall{proto: p, op: "NoSuchOperation"}.do(t, env)
		wantError(t, p, r, 400, "UnknownOperationException")
		// In the model, but not an operation this service offers.
		r = rawCall{proto: p, op: "CreateBuild", body: bodyIn(t, p, `{"Name": "b"}`)}.do(t, env)
		m := wantError(t, p, r, 400, "InvalidRequestException")
		if !strings.Contains(m["message"].(string), "CreateBuild") {
			t.Errorf("message %q does not name the operation", m["message"])
		}
	}
	wrongPrefix := rawCall{proto: wire.JSON, op: "ListLocations", edit: func(r *http.Request) {
		r.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	}}
	wantError(t, wire.JSON, wrongPrefix.do(t, env), 400, "UnknownOperationException")
}

func TestOtherPaths(t *testing.T) {
	env := apitest.Start(t)
	for _, tc := range []struct {
		method, path string
		header       map[string]string
		status       int
	}{
		{"GET", "/", nil, 404},
		{"GET", "/favicon.ico", nil, 404},
		{"POST", "/", nil, 404}, // no X-Amz-Target
		{"POST", "/elsewhere", map[string]string{"X-Amz-Target": "GameLift.ListLocations"}, 404},
		{"GET", "/service/GameLift/operation/ListLocations", nil, 404},
		{"PUT", "/", map[string]string{"X-Amz-Target": "GameLift.ListLocations"}, 404},
		{"POST", "/healthz", nil, 404},
	} {
		req, _ := http.NewRequest(tc.method, env.URL+tc.path, strings.NewReader("{}"))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if r := env.Do(t, req); r.Status != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, r.Status, tc.status)
		}
	}
	resp, err := http.Get(env.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "ok" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, b)
	}
}

func TestErrorTypeIsBare(t *testing.T) {
	env := apitest.Start(t)
	for _, p := range wireProtocols {
		r := rawCall{proto: p, op: "DeleteLocation", body: bodyIn(t, p, `{"LocationName": "custom-none"}`)}.do(t, env)
		m := wantError(t, p, r, 400, "NotFoundException")
		if typ := m["__type"].(string); strings.ContainsAny(typ, ":#") {
			t.Errorf("__type %q is not a bare shape name", typ)
		}
		if len(m) != 3 {
			t.Errorf("error body has members %v, want __type, message and Message", m)
		}
	}
}

// The Go SDK reads auth errors from CBOR bodies as generic API errors with
// the AWS code.
func TestGoSDKSeesAuthErrorCodes(t *testing.T) {
	env := apitest.Start(t)
	for key, want := range map[string]string{
		apitest.AccessKey: "InvalidSignatureException",
		"AKIDUNKNOWN":     "UnrecognizedClientException",
	} {
		gl := gamelift.New(gamelift.Options{
			Region: apitest.Region, BaseEndpoint: aws.String(env.URL), RetryMaxAttempts: 1,
			Credentials: credentials.NewStaticCredentialsProvider(key, "wrong-secret", ""),
		})
		_, err := gl.ListLocations(context.Background(), &gamelift.ListLocationsInput{})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != want || ae.ErrorMessage() == "" {
			t.Errorf("key %s: got %v, want %s with a message", key, err, want)
		}
	}
}

// An operation name that is not UTF-8 still gets a well-formed error body.
func TestInvalidUTF8OperationName(t *testing.T) {
	env := apitest.Start(t)
	c := rawCall{proto: wire.CBOR, op: "%FF%FE"}
	r := c.do(t, env)
	wantError(t, wire.CBOR, r, 400, "UnknownOperationException")
	j := rawCall{proto: wire.JSON, op: "x", pre: func(r *http.Request) { r.Header.Set("X-Amz-Target", "GameLift.\xff") }}
	wantError(t, wire.JSON, j.do(t, env), 400, "UnknownOperationException")
}
