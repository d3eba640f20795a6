package matchmaking

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFind: any rule set the loader accepts can be matched against a
// random pool without a panic, and every match it proposes passes Check.
func FuzzFind(f *testing.F) {
	files, _ := filepath.Glob("ruleset/testdata/valid/*.json")
	for i, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), int64(i))
		}
	}
	f.Fuzz(func(t *testing.T, body string, seed int64) {
		rs, err := parseOK(body)
		if err != nil {
			return
		}
		rng := rand.New(rand.NewSource(seed))
		pool := genPool(rng, 1+rng.Intn(30))
		now := t0.Add(60 * 1e9)
		for _, m := range Find(rs, pool, now, Options{Seed: seed}) {
			if err := Check(rs, pool, m, now, Options{}); err != nil {
				t.Fatalf("proposed match fails Check: %v", err)
			}
		}
	})
}
