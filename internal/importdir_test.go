package internal_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainImportsOnlyStandardLibrary keeps internal/game the bottom of
// the dependency graph: storage, wire and transport depend on it, never
// the reverse, and it depends on nothing outside the standard library.
func TestDomainImportsOnlyStandardLibrary(t *testing.T) {
	entries, err := os.ReadDir("game")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		pkg, err := build.ImportDir(filepath.Join("game"), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				t.Errorf("internal/game imports %s; the domain uses the standard library only", imp)
			}
		}
		return
	}
}

// TestAccessImportsOnlyStandardLibrary keeps internal/access, which the
// API, the console and the event stream all ask, a leaf: the standard
// library only, and nothing of Anylift.
func TestAccessImportsOnlyStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir("access", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range append(pkg.Imports, pkg.TestImports...) {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
			t.Errorf("internal/access imports %s; it uses the standard library only", imp)
		}
	}
}
