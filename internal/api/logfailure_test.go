package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// A caller that went away before its answer is logged as information,
// not as an error of the service; a failure while the caller waits is an
// error, and so is a canceled context the caller did not cause.
func TestLogFailureTellsACallerGoneFromAFailure(t *testing.T) {
	var logs bytes.Buffer
	h := &Handler{log: slog.New(slog.NewTextHandler(&logs, nil))}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	canceled := fmt.Errorf("begin: %w", context.Canceled)
	for _, c := range []struct {
		name  string
		ctx   context.Context
		err   error
		level string
	}{
		{"caller gone", gone, canceled, "level=INFO msg=\"caller went away\""},
		{"caller waiting, canceled inside", context.Background(), canceled, "level=ERROR msg=\"operation failed\""},
		{"caller gone, another failure", gone, errors.New("disk full"), "level=ERROR msg=\"operation failed\""},
	} {
		logs.Reset()
		r := httptest.NewRequestWithContext(c.ctx, "POST", "/", nil)
		h.logFailure(r, "DescribeGameSessions", "req-1", c.err)
		if !strings.Contains(logs.String(), c.level) {
			t.Errorf("%s: logged %q, want %s", c.name, logs.String(), c.level)
		}
	}
}
