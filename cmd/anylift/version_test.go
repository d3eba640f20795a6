package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
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
