package console_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
)

func (c *client) signInAs(keyID, secret string) {
	c.t.Helper()
	resp, _ := c.post("/console/signin", url.Values{"access_key_id": {keyID},
		"secret_access_key": {secret}, "next": {"/console/fleets"}}, c.base)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/fleets" {
		c.t.Fatalf("sign-in as %s: %s to %q", keyID, resp.Status, resp.Header.Get("Location"))
	}
}

func writeAt(t *testing.T, path, content string, n int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2026, 1, 1, 0, 0, n, 0, time.UTC)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleHonoursRights: a key signed in to the console can see and
// do there what its policy lets it do through the API, and its session
// ends when the key is revoked.
func TestConsoleHonoursRights(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	writeAt(t, filepath.Join(dir, "reader.json"), `{"Statement": [
		{"Effect": "Allow", "Action": ["gamelift:Describe*", "gamelift:List*"], "Resource": "*"},
		{"Effect": "Deny", "Action": "gamelift:ListCompute", "Resource": "*"}]}`, 1)
	writeAt(t, creds, "AKIDREADER secret-reader reader.json\n", 2)
	e := fleettest.New(t, apitest.WithCredentialsFile(creds))
	p := e.Process("host-1", "proc-1")
	id := e.Session(p, "watched")

	c := newClient(t, e.API.URL)
	c.signInAs("AKIDREADER", "secret-reader")
	for _, path := range []string{"/console/fleets", "/console/fleets/" + e.Fleet, "/console/fleets/" + e.Fleet + "/sessions",
		"/console/session?id=" + url.QueryEscape(id), "/console/locations", "/console/queues", "/console/placements"} {
		if resp, _ := c.get(path); resp.StatusCode != 200 {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	resp, body := c.get("/console/fleets/" + e.Fleet + "/computes")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Access key AKIDREADER is not authorized to perform gamelift:ListCompute on resource arn:aws:gamelift:us-west-2:123456789012:fleet/"+e.Fleet) {
		t.Errorf("computes page denied by the policy: %s\n%s", resp.Status, body)
	}
	_, page := c.get("/console/session?id=" + url.QueryEscape(id))
	resp, body = c.post("/console/session/terminate", url.Values{"id": {id}, "csrf": {csrfOf(t, page)}}, c.base)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "gamelift:TerminateGameSession on resource "+id) {
		t.Errorf("terminate by a reader: %s\n%s", resp.Status, body)
	}
	if s := status(t, e, id); s != "ACTIVE" {
		t.Fatalf("the reader terminated the session: %s", s)
	}

	// Revoked: the session cookie no longer verifies.
	writeAt(t, creds, "AKIDOTHER secret-other\n", 3)
	e.Clock.Set(e.Clock.Now().Add(access.CheckInterval))
	if resp, _ := c.get("/console/fleets"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/signin") {
		t.Errorf("after the key was revoked: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
}
