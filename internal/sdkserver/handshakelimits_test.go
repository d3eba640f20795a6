package sdkserver_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
)

// Every handshake member is bounded: one out of bounds is refused with
// 400 naming the member (never echoing its value), before the backend
// hears of it; the SDKs' own handshakes pass.
func TestHandshakeMembersAreBounded(t *testing.T) {
	env := sdktest.Start(t, sdkserver.Config{})
	env.Backend.AllowToken("fleet-1", "compute-1", "good")
	good := url.Values{"pID": {"proc-1"}, "FleetId": {"fleet-1"}, "ComputeId": {"compute-1"}, "Authorization": {"good"},
		"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "IdempotencyToken": {"9f449d70-1c1e-4c6e-9b5a-1f6c0a7e3d21"}}
	with := func(k, v string) string {
		q := url.Values{}
		for kk, vv := range good {
			q[kk] = vv
		}
		q.Set(k, v)
		return env.URL + "/?" + q.Encode()
	}
	for name, c := range map[string]struct{ member, value string }{
		"a 100 KB pID":               {"pID", strings.Repeat("p", 100_000)},
		"a pID of 1025 characters":   {"pID", strings.Repeat("p", 1025)},
		"a pID with a newline":       {"pID", "proc\n1"},
		"a pID of invalid UTF-8":     {"pID", "proc\xff"},
		"a fleet id of another form": {"FleetId", "fleet_1"},
		"a long fleet id":            {"FleetId", "fleet-" + strings.Repeat("a", 600)},
		"a compute name with a dot":  {"ComputeId", "host.local"},
		"a long compute name":        {"ComputeId", strings.Repeat("c", 1025)},
		"a long token":               {"Authorization", strings.Repeat("t", 65)},
		"a token with a space":       {"Authorization", "go od"},
		"an sdk version of words":    {"sdkVersion", "latest"},
		"a long sdk language":        {"sdkLanguage", strings.Repeat("L", 33)},
		"a long idempotency token":   {"IdempotencyToken", strings.Repeat("i", 49)},
	} {
		_, resp, err := dial(t, with(c.member, c.value), nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v %v", name, resp, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "invalid handshake: "+c.member+" must be") || (len(c.value) > 3 && strings.Contains(string(b), c.value)) {
			t.Errorf("%s: refused with %q", name, b)
		}
	}
	if len(env.Backend.Events) != 0 {
		t.Error("a refused handshake reached the backend")
	}
	c, resp, err := dial(t, env.URL+"/?"+good.Encode(), nil)
	if err != nil {
		t.Fatalf("a handshake within bounds: %v %v", resp, err)
	}
	c.CloseNow()
}
