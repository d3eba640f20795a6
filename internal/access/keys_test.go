package access

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const readOnly = `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "gamelift:Describe*", "Resource": "*"}]}`

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "read-only.json", readOnly)
	abs := write(t, dir, "abs.json", readOnly)
	path := write(t, dir, "credentials", "# studio keys\n\nAKIDONE secret-one\n  AKIDTWO:secret-two  \nAKIDTHREE=secret-three\nAKIDTAB\tsecret-tab\n"+
		"AKIDSPACED = secret-spaced\n"+
		"AKIDREAD secret-read read-only.json\n"+
		"AKIDREAD2:secret-read2 read-only.json rate=10\n"+
		"AKIDABS secret-abs "+abs+" burst=5 rate=2.5\n"+
		"AKIDFAST secret-fast - rate=0   # load tests\n"+
		"AKIDNOTE secret-note # every right\n")
	cf, err := ReadCredentials(path, known)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Key{}
	for _, k := range cf.Keys {
		got[k.ID] = k
	}
	for id, secret := range map[string]string{"AKIDONE": "secret-one", "AKIDTWO": "secret-two", "AKIDTHREE": "secret-three",
		"AKIDTAB": "secret-tab", "AKIDSPACED": "secret-spaced", "AKIDREAD": "secret-read", "AKIDREAD2": "secret-read2",
		"AKIDABS": "secret-abs", "AKIDFAST": "secret-fast", "AKIDNOTE": "secret-note"} {
		if k := got[id]; k == nil || k.Secret != secret {
			t.Errorf("%s: %+v, want secret %q", id, k, secret)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d keys, want 10", len(got))
	}
	if k := got["AKIDNOTE"]; k.Policy != nil || k.Rate != nil {
		t.Errorf("a trailing comment read as fields: %+v", k)
	}
	if got["AKIDONE"].Policy != nil || got["AKIDONE"].Rate != nil {
		t.Errorf("AKIDONE has rights or a rate: %+v", got["AKIDONE"])
	}
	r := got["AKIDREAD"]
	if r.Policy == nil || r.PolicyFile != filepath.Join(dir, "read-only.json") || r.Policy.Decide("gamelift:DeleteFleet", "*") != NotAllowed {
		t.Errorf("AKIDREAD: %+v", r)
	}
	if got["AKIDREAD2"].Policy != r.Policy {
		t.Error("a policy file named twice is read twice")
	}
	if rt := got["AKIDREAD2"].Rate; rt == nil || *rt != (Rate{10, 20}) {
		t.Errorf("AKIDREAD2 rate %+v, want 10/s burst 20", rt)
	}
	if rt := got["AKIDABS"].Rate; rt == nil || *rt != (Rate{2.5, 5}) || got["AKIDABS"].PolicyFile != abs {
		t.Errorf("AKIDABS: %+v", got["AKIDABS"])
	}
	if rt := got["AKIDFAST"].Rate; rt == nil || rt.PerSecond != 0 || got["AKIDFAST"].Policy != nil {
		t.Errorf("AKIDFAST: %+v", got["AKIDFAST"])
	}
	want := []string{path, filepath.Join(dir, "read-only.json"), abs}
	if strings.Join(cf.Files, ",") != strings.Join(want, ",") || len(cf.Stats) != 3 {
		t.Errorf("files %v, want %v", cf.Files, want)
	}
}

func TestReadCredentialsErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "read-only.json", readOnly)
	write(t, dir, "broken.json", `{"Statement": {"Effect": "Allow", "Action": "gamelift:Describe*"}}`)
	for _, tc := range []struct{ content, want string }{
		{"AKIDONE secret-one\nonly-one-field\n", ":2: want \"ACCESS_KEY_ID SECRET_KEY"},
		{"AKIDONE secret-one\nAKIDONE secret-two\n", ":2: access key AKIDONE is already given on line 1"},
		{"AKIDONE secret-one missing.json\n", ":1: policy: open " + filepath.Join(dir, "missing.json")},
		{"AKIDONE secret-one broken.json\n", ":1: policy " + filepath.Join(dir, "broken.json") + ": Statement: exactly one of Resource and NotResource"},
		{"AKIDONE secret-one read-only.json rate=fast\n", "rate=fast: want requests per second"},
		{"AKIDONE secret-one read-only.json rate=-1\n", "rate=-1"},
		{"AKIDONE secret-one read-only.json burst=0\n", "burst=0"},
		{"AKIDONE secret-one read-only.json limit=3\n", `"limit=3": after the policy file`},
		{"AKIDONE: \n", "want"},
	} {
		path := write(t, dir, "credentials", tc.content)
		cf, err := ReadCredentials(path, known)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "credentials file "+path) {
			t.Errorf("%q: %v, want an error naming the file and containing %q", tc.content, err, tc.want)
		}
		if cf == nil || len(cf.Files) == 0 || cf.Files[0] != path {
			t.Errorf("%q: files read %+v", tc.content, cf)
		}
	}
	if _, err := ReadCredentials(filepath.Join(dir, "nonexistent"), known); err == nil {
		t.Error("a missing credentials file accepted")
	}
}

// FuzzCredentialsLine checks that no line makes the parser panic and that
// a key it accepts has an id, a secret and a sane rate.
func FuzzCredentialsLine(f *testing.F) {
	for _, seed := range []string{"AKID secret", "AKID:secret p.json rate=3 burst=4", "AKID = secret - rate=0",
		"A=B=C", ": x", "AKID secret - burst=1e9", "AKID secret p rate=NaN"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.TrimSpace(line)
		if line == "" {
			return
		}
		k, _, err := parseLine(line)
		if err != nil {
			return
		}
		if k.ID == "" || k.Secret == "" || strings.ContainsAny(k.ID+k.Secret, " \t") {
			t.Fatalf("key %+v", k)
		}
		if k.Rate != nil && (k.Rate.PerSecond < 0 || k.Rate.PerSecond > MaxRate || k.Rate.Burst < 1) {
			t.Fatalf("rate %+v", k.Rate)
		}
	})
}
