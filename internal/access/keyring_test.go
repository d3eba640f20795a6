package access

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logBuffer collects log lines safely.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// rewrite replaces a file's content and gives it a new modification time,
// as an editor or a secret mount would.
func rewrite(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestKeyringReloads(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)}
	var logs logBuffer
	creds := filepath.Join(dir, "credentials")
	policy := filepath.Join(dir, "ops.json")
	rewrite(t, policy, readOnly, clk.Now())
	rewrite(t, creds, "AKIDONE secret-one\nAKIDOPS secret-ops ops.json\n", clk.Now())
	r, err := NewKeyring(KeyringConfig{Fixed: map[string]string{"AKIDFLAG": "secret-flag"}, File: creds, Known: known,
		Log: slog.New(slog.NewTextHandler(&logs, nil)), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	secret := func(id string) string {
		k, ok := r.Key(id)
		if !ok {
			return "<none>"
		}
		return k.Secret
	}
	if secret("AKIDONE") != "secret-one" || secret("AKIDFLAG") != "secret-flag" || secret("AKIDTWO") != "<none>" {
		t.Fatalf("keys at start: %v", r.Keys().IDs())
	}

	// Rotated, added and revoked: seen once the interval has passed.
	rewrite(t, creds, "AKIDONE secret-one-rotated\nAKIDTWO secret-two\n", clk.Now().Add(time.Second))
	if secret("AKIDONE") != "secret-one" {
		t.Error("the file was read again before the interval")
	}
	clk.Advance(CheckInterval)
	if secret("AKIDONE") != "secret-one-rotated" || secret("AKIDTWO") != "secret-two" || secret("AKIDOPS") != "<none>" || secret("AKIDFLAG") != "secret-flag" {
		t.Errorf("after the change: %v", r.Keys().IDs())
	}
	if !strings.Contains(logs.String(), `msg="credentials file reloaded"`) || !strings.Contains(logs.String(), "added=[AKIDTWO] removed=[AKIDOPS] changed=[AKIDONE]") {
		t.Errorf("reload log: %s", logs.String())
	}

	// A policy changed alone is taken up too.
	rewrite(t, creds, "AKIDOPS secret-ops ops.json\n", clk.Now().Add(2*time.Second))
	clk.Advance(CheckInterval)
	if k, _ := r.Key("AKIDOPS"); k == nil || k.Policy.Decide("gamelift:DeleteFleet", "*") != NotAllowed {
		t.Fatalf("AKIDOPS: %+v", k)
	}
	rewrite(t, policy, `{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}}`, clk.Now().Add(3*time.Second))
	clk.Advance(CheckInterval)
	if k, _ := r.Key("AKIDOPS"); k.Policy.Decide("gamelift:DeleteFleet", "*") != Allowed {
		t.Error("the changed policy was not taken up")
	}

	// A broken policy keeps the keys in use, logged once as an error.
	logs.mu.Lock()
	logs.b.Reset()
	logs.mu.Unlock()
	rewrite(t, policy, `{"Statement": {"Effect": "Allow", "Action": "gamelift:Nope", "Resource": "*"}}`, clk.Now().Add(4*time.Second))
	clk.Advance(CheckInterval)
	r.Key("AKIDOPS")
	clk.Advance(CheckInterval)
	if k, _ := r.Key("AKIDOPS"); k == nil || k.Policy.Decide("gamelift:DeleteFleet", "*") != Allowed {
		t.Errorf("a broken policy replaced the keys in use: %+v", k)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), `matches no gamelift action`) ||
		!strings.Contains(logs.String(), policy) {
		t.Errorf("%d errors logged: %s", n, logs.String())
	}
	// Fixing it is taken up.
	rewrite(t, policy, readOnly, clk.Now().Add(5*time.Second))
	clk.Advance(CheckInterval)
	if k, _ := r.Key("AKIDOPS"); k.Policy.Decide("gamelift:DeleteFleet", "*") != NotAllowed {
		t.Error("the fixed policy was not taken up")
	}

	// A file removed keeps the keys; it coming back is taken up.
	os.Remove(creds)
	clk.Advance(CheckInterval)
	if secret("AKIDOPS") != "secret-ops" {
		t.Error("a missing file revoked the keys")
	}
	rewrite(t, creds, "AKIDBACK secret-back\n", clk.Now().Add(6*time.Second))
	clk.Advance(CheckInterval)
	if secret("AKIDBACK") != "secret-back" || secret("AKIDOPS") != "<none>" {
		t.Errorf("after the file came back: %v", r.Keys().IDs())
	}

	// A key also given by --access-key is refused, on reload as at start.
	rewrite(t, creds, "AKIDFLAG other-secret\n", clk.Now().Add(7*time.Second))
	clk.Advance(CheckInterval)
	if secret("AKIDFLAG") != "secret-flag" || secret("AKIDBACK") != "secret-back" {
		t.Errorf("a key given twice replaced the keys: %v", r.Keys().IDs())
	}
	if _, err := NewKeyring(KeyringConfig{Fixed: map[string]string{"AKIDFLAG": "x"}, File: creds, Known: known}); err == nil ||
		!strings.Contains(err.Error(), "also given by --access-key") {
		t.Errorf("start with a key given twice: %v", err)
	}
}

func TestKeyringRefusesBrokenFileAtStart(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "p.json", `{"Statement": {"Effect": "Permit", "Action": "*", "Resource": "*"}}`)
	creds := write(t, dir, "credentials", "AKIDONE secret-one p.json\n")
	_, err := NewKeyring(KeyringConfig{File: creds, Known: known})
	if err == nil || !strings.Contains(err.Error(), creds+":1") || !strings.Contains(err.Error(), filepath.Join(dir, "p.json")) ||
		!strings.Contains(err.Error(), `Statement.Effect: must be "Allow" or "Deny"`) {
		t.Errorf("NewKeyring: %v", err)
	}
}

func TestKeyringFixedOnly(t *testing.T) {
	r, err := NewKeyring(KeyringConfig{Fixed: map[string]string{"AKID": "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := r.Key("AKID"); !ok || k.Secret != "s" || k.Policy != nil {
		t.Errorf("fixed key: %+v", k)
	}
}
