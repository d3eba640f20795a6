package soak

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/aws/smithy-go"

	gl "github.com/anylift/anylift/sdk/server"
)

// stats counts the calls the load makes, by operation, and their failures
// by kind: those the load provoked on purpose and the others.
type stats struct {
	mu       sync.Mutex
	calls    map[string]int64  // by operation
	expected map[string]int64  // "operation: kind", failures provoked on purpose
	failed   map[string]int64  // "operation: kind", every other failure
	example  map[string]string // the first error of each key of failed, in full
}

func newStats() *stats {
	return &stats{calls: map[string]int64{}, expected: map[string]int64{}, failed: map[string]int64{}, example: map[string]string{}}
}

// record counts one call of op that returned err. A failure whose kind is
// one of allowed is counted among the failures provoked on purpose (or
// normal answers, such as a fleet without room); a call cut off by the end
// of the run is not a failure.
func (s *stats) record(op string, err error, allowed ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	if err == nil {
		return
	}
	s.fail(op, err, allowed)
}

// mustFail counts one call of op that must fail with one of the kinds
// wanted; success counts as the failure "no error".
func (s *stats) mustFail(op string, err error, wanted ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	if err == nil {
		err = kindError("no error")
	}
	s.fail(op, err, wanted)
}

func (s *stats) fail(op string, err error, allowed []string) {
	kind := errKind(err)
	switch {
	case kind == "canceled":
		s.expected[op+": cut off by the end of the run"]++
	case slices.Contains(allowed, kind) || kind == clientClosed:
		s.expected[op+": "+kind]++
	default:
		key := op + ": " + kind
		if s.failed[key] == 0 {
			s.example[key] = err.Error()
		}
		s.failed[key]++
	}
}

// totals are the running sums, for the samples' rates.
type totals struct{ calls, expected, failed int64 }

func (s *stats) totals() totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t totals
	for _, n := range s.calls {
		t.calls += n
	}
	for _, n := range s.expected {
		t.expected += n
	}
	for _, n := range s.failed {
		t.failed += n
	}
	return t
}

// failures returns a copy of the counts of unexpected failures by key.
func (s *stats) failures() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.failed)
}

// since lists the keys of now whose counts grew from then, with the growth.
func since(then, now map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if d := now[k] - then[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, d))
		}
	}
	return strings.Join(parts, "; ")
}

// report lists every count, sorted.
func (s *stats) report() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	section := func(title string, m map[string]int64) {
		fmt.Fprintf(&b, "%s:\n", title)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "  %-60s %9d\n", k, m[k])
		}
	}
	section("calls", s.calls)
	section("failures provoked on purpose, and harmless ones", s.expected)
	section("other failures", s.failed)
	for _, k := range slices.Sorted(maps.Keys(s.example)) {
		fmt.Fprintf(&b, "first %s: %s\n", k, s.example[k])
	}
	return b.String()
}

// errKind names an error's kind: the API's error code, the server SDK's
// error type, or what went wrong on the way.
func errKind(err error) string {
	var api smithy.APIError
	var sdk *gl.Error
	var ne net.Error
	var cc *clientClosedError
	switch {
	case errors.As(err, &cc):
		return clientClosed
	case errors.As(err, &api):
		return api.ErrorCode()
	case errors.As(err, &sdk):
		return "sdk " + sdk.Type.String()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne):
		return "network"
	}
	var k kindError
	if errors.As(err, &k) {
		return string(k)
	}
	return "other"
}

// clientClosed is the kind of a call whose answer could not be read
// because the client's own transport closed the connection (see
// tracingTransport): not a failure of the server.
const clientClosed = "connection closed by the client's own transport"

// kindError is a failure the load itself detects (a session never
// activated, a placement not fulfilled).
type kindError string

func (k kindError) Error() string { return string(k) }
