package matchmaking

import (
	"go/build"
	"strings"
	"testing"
)

// TestPureImports keeps the matcher and the rule language free of storage,
// transport and the application: standard library, plus the matcher's own
// rule set package.
func TestPureImports(t *testing.T) {
	for _, dir := range []string{".", "ruleset"} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && imp != "github.com/anylift/anylift/internal/matchmaking/ruleset" {
				t.Errorf("%s imports %s", pkg.ImportPath, imp)
			}
		}
	}
}
