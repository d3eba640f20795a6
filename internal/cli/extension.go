package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/anylift/anylift/internal/extapi"
)

// Extension calls Anylift's own operations (extapi: fault injection, the
// status view) with the endpoint, region and credentials the operations
// would use.
type Extension struct{ t *target }

// Target is where and as whom an Extension calls: empty fields are
// resolved as for the operations (ANYLIFT_* and AWS_* variables, then the
// defaults; dev's key pair for an endpoint on this machine).
type Target struct {
	EndpointURL, Region, AccessKey, SecretKey, SessionToken string
}

// NewExtension resolves tg. Errors: a usage error for a bad value, or no
// credentials at all (Fail gives each its exit status).
func NewExtension(tg Target, getenv func(string) string) (*Extension, error) {
	t, _, err := resolve(&globals{endpoint: tg.EndpointURL, region: tg.Region, accessKey: tg.AccessKey, secretKey: tg.SecretKey,
		sessionToken: tg.SessionToken, output: "json"}, getenv)
	if err != nil {
		return nil, err
	}
	return &Extension{t: t}, nil
}

// Endpoint is the endpoint called.
func (e *Extension) Endpoint() string { return e.t.endpoint }

// Call sends in as operation op and decodes the answer into out. An error
// answer words itself as the operations' do ("An error occurred (...)
// when calling the InjectFault operation: ...").
func (e *Extension) Call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	answer, err := e.t.post(ctx, extapi.Path+op, op, body, func(h http.Header) { h.Set("Content-Type", "application/json") })
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return &connectError{url: e.t.endpoint, reason: err.Error()}
	}
	return nil
}

// Usagef is a usage error (exit status 252 through Fail).
func Usagef(format string, args ...any) error { return usagef(format, args...) }

// Fail prints err to stderr as the operations print theirs and returns it
// as an *ExitError with their exit status: 252 for a usage error, 253 for
// missing credentials, 254 for an error answer, 255 for no answer.
func Fail(stderr io.Writer, err error) error {
	var se *serviceError
	var ce *connectError
	var ue *usageError
	switch {
	case errors.As(err, &se):
		return fail(stderr, ExitService, err)
	case errors.As(err, &ce):
		return fail(stderr, ExitConnection, err)
	case errors.As(err, &ue):
		return fail(stderr, ExitUsage, err)
	}
	return fail(stderr, ExitConfig, err)
}
