package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/server"
)

// WithFaultInjection turns fault injection on.
func WithFaultInjection(c *server.Config) { c.AllowFaultInjection = true }

// CallExtension calls one of Anylift's own operations (extapi), signed
// with the test credentials, and returns the raw answer. body may be a
// string of JSON or any value.
func (e *Env) CallExtension(t testing.TB, op string, body any) *Response {
	t.Helper()
	return e.CallExtensionAs(t, AccessKey, SecretKey, op, body)
}

// CallExtensionAs is CallExtension signed with another key.
func (e *Env) CallExtensionAs(t testing.TB, key, secret, op string, body any) *Response {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	req, err := http.NewRequest(http.MethodPost, e.URL+extapi.Path+op, bytes.NewReader([]byte(raw)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	Sign(t, req, key, secret, time.Now())
	return e.Do(t, req)
}

// Extension calls op with in, fails the test unless it answers 200, and
// decodes the answer.
func Extension[Out any](t testing.TB, e *Env, op string, in any) *Out {
	t.Helper()
	r := e.CallExtension(t, op, in)
	if r.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", op, r.Status, r.Body)
	}
	out := new(Out)
	if err := json.Unmarshal(r.Body, out); err != nil {
		t.Fatalf("%s: %v: %s", op, err, r.Body)
	}
	return out
}
