package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBinaryVersion: "anylift version" prints the version given at build
// time, the commit the binary was built from (when the Go tool could
// stamp it: a git checkout, built with -buildvcs=true) and the platform.
func TestBinaryVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "anylift")
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.version=v9.8.7", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(out))
	if !strings.HasPrefix(line, "anylift v9.8.7 ") || !strings.HasSuffix(line, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("version: %q", line)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil || !strings.Contains(string(mustBuildInfo(t, bin)), "vcs.revision=") {
		t.Logf("no commit stamped here (%q); the commit check is skipped", line)
		return
	}
	if want := "commit " + strings.TrimSpace(string(head))[:12]; !strings.Contains(line, want) {
		t.Fatalf("version %q lacks %q", line, want)
	}
}

func mustBuildInfo(t *testing.T, bin string) []byte {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBinaryVersionFromLdflags: a release build (scripts/release.sh, the
// Containerfile) gives the version and the commit with -ldflags and may
// have no VCS stamp at all (a source archive, a build context without
// .git): "anylift version" prints both.
func TestBinaryVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "anylift")
	const rev = "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command("go", "build", "-buildvcs=false", "-trimpath",
		"-ldflags", "-s -w -X main.version=v1.2.3 -X main.commit="+rev, "-o", bin, ".")
	// As a release builds: no cgo, and none of the test run's GOFLAGS
	// (CI's -race needs cgo).
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "anylift v1.2.3 commit 0123456789ab " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if line := strings.TrimSpace(string(out)); line != want {
		t.Fatalf("version:\n got %q\nwant %q", line, want)
	}
}

func TestFormatVersion(t *testing.T) {
	stamped := func(rev, when string, modified bool) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: fmt.Sprint(modified)},
		}}
	}
	const a, b = "aaaaaaaaaaaa1111", "bbbbbbbbbbbb2222"
	for _, tc := range []struct {
		name, v, rev string
		info         *debug.BuildInfo
		want         string
	}{
		{"nothing known", "", "", nil, "anylift (unreleased) linux/amd64"},
		{"ldflags only", "v1.0.0", a, nil, "anylift v1.0.0 commit aaaaaaaaaaaa linux/amd64"},
		{"stamped only", "", "", stamped(a, "2026-01-02T03:04:05Z", true),
			"anylift (unreleased) commit aaaaaaaaaaaa (2026-01-02T03:04:05Z) modified linux/amd64"},
		{"ldflags agree with the stamp", "v1.0.0", a, stamped(a, "2026-01-02T03:04:05Z", false),
			"anylift v1.0.0 commit aaaaaaaaaaaa (2026-01-02T03:04:05Z) linux/amd64"},
		{"ldflags win over another stamp", "v1.0.0", b, stamped(a, "2026-01-02T03:04:05Z", true),
			"anylift v1.0.0 commit bbbbbbbbbbbb linux/amd64"},
		{"module version", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0+dirty"}},
			"anylift v0.9.0 linux/amd64"},
		{"short commit", "v1", "abc", nil, "anylift v1 commit abc linux/amd64"},
	} {
		if got := formatVersion(tc.v, tc.rev, tc.info, "linux/amd64"); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
