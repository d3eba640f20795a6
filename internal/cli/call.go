package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anylift/anylift/internal/wire"
)

// Defaults match "anylift serve".
const (
	DefaultEndpoint = "http://127.0.0.1:9870"
	DefaultRegion   = "us-west-2"
)

// DevAccessKey and DevSecretKey are the key pair used, when none is given,
// for an endpoint on this machine: "anylift dev" accepts any pair, and any
// other server refuses this one unless an operator configured it.
const (
	DevAccessKey = "anylift"
	DevSecretKey = "anylift"
)

// isLoopback reports whether endpoint's host is this machine (localhost or
// a loopback address).
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// target is where and as whom requests go.
type target struct {
	endpoint, region string
	creds            aws.Credentials
	devPair          bool // creds are DevAccessKey/DevSecretKey, for lack of any
	client           *http.Client
	now              func() time.Time
}

// serviceError is an error answer of the service (exit status 254).
type serviceError struct {
	code, op, message string
}

func (e *serviceError) Error() string {
	return fmt.Sprintf("An error occurred (%s) when calling the %s operation: %s", e.code, e.op, e.message)
}

// connectError is a request that got no usable answer (exit status 255).
type connectError struct{ url, reason string }

func (e *connectError) Error() string {
	if e.reason != "" {
		return fmt.Sprintf("Unreadable answer from %s: %s", e.url, e.reason)
	}
	return fmt.Sprintf("Could not connect to the endpoint URL: %q", e.url)
}

// call sends body as operation op over AWS JSON 1.1, signed with SigV4 for
// service "gamelift", and returns the answer's body. An error answer is a
// *serviceError; no answer at all is a *connectError.
func (t *target) call(ctx context.Context, op string, body []byte) ([]byte, error) {
	return t.post(ctx, "/", op, body, func(h http.Header) {
		h.Set("Content-Type", wire.ContentTypeJSON)
		h.Set("X-Amz-Target", "GameLift."+op)
	})
}

// post sends body to path (below the endpoint) for operation op, with the
// headers set sets, signed with SigV4 for service "gamelift"; it answers as
// call does.
func (t *target) post(ctx context.Context, path, op string, body []byte, set func(http.Header)) ([]byte, error) {
	url := strings.TrimRight(t.endpoint, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, usagef("--endpoint-url %q: %v", t.endpoint, err)
	}
	set(req.Header)
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, t.creds, req, hex.EncodeToString(sum[:]), "gamelift", t.region, t.now()); err != nil {
		return nil, fmt.Errorf("signing the request: %w", err)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, &connectError{url: url}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, &connectError{url: url}
	}
	if resp.StatusCode/100 != 2 {
		e := errorAnswer(op, resp.StatusCode, answer)
		if t.devPair && (e.code == "UnrecognizedClientException" || e.code == "InvalidSignatureException") {
			e.message += " (no credentials were given, so the key pair of \"anylift dev\" was tried; give --access-key and --secret-key)"
		}
		return nil, e
	}
	return answer, nil
}

// callOnce sends the input shape in as operation op and reads the answer
// as the output shape type out.
func (t *target) callOnce(ctx context.Context, op string, in any, out reflect.Type) (*object, error) {
	body, err := encodeInput(in)
	if err != nil {
		return nil, err
	}
	answer, err := t.call(ctx, op, body)
	if err != nil {
		return nil, err
	}
	tree, err := readAnswer(answer, out)
	if err != nil {
		return nil, &connectError{url: t.endpoint, reason: err.Error()}
	}
	o, ok := tree.(*object)
	if !ok {
		return nil, &connectError{url: t.endpoint, reason: "the answer is not a JSON object"}
	}
	return o, nil
}

// errorAnswer reads an AWS JSON 1.1 error body: the exception name is
// __type after any namespace ("…#NotFoundException"), the message is
// "message" or "Message".
func errorAnswer(op string, status int, body []byte) *serviceError {
	var b struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	json.Unmarshal(body, &b)
	code := b.Type
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if code == "" {
		code = fmt.Sprint(status)
	}
	msg := b.Message
	if msg == "" {
		msg = b.MessageU
	}
	if msg == "" && code == fmt.Sprint(status) {
		msg = http.StatusText(status)
	}
	return &serviceError{code: code, op: op, message: msg}
}
