package matchmaking

import (
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// readFile is the text of a test data file.
func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func benchPool(n int) []Ticket {
	rng := rand.New(rand.NewSource(7))
	pool := make([]Ticket, n)
	for i := range pool {
		pool[i] = solo(fmt.Sprintf("t%05d", i), float64(rng.Intn(30000))/1000,
			map[string]ruleset.Value{"skill": num(float64(rng.Intn(1000)) / 10)})
	}
	return pool
}

// BenchmarkFind runs one matching pass over 10,000 waiting solo tickets
// and reports tickets matched per second of matcher time.
func BenchmarkFind(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"1v1-skill", ""}, {"5v5-expansions", readFile(b, "testdata/five_vs_five_expansions.json")},
	} {
		b.Run(c.name, func(b *testing.B) {
			var rs *ruleset.RuleSet
			if c.body == "" {
				rs = fixture(b, "one_vs_one_skill.json")
			} else {
				rs = mustParse(b, c.body)
			}
			pool := benchPool(10000)
			now := t0.Add(30 * time.Second)
			matched := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				matched = 0
				for _, m := range Find(rs, pool, now, Options{Seed: int64(i)}) {
					matched += len(m.Tickets)
				}
			}
			b.ReportMetric(float64(matched)*float64(b.N)/b.Elapsed().Seconds(), "tickets/s")
			b.ReportMetric(float64(matched), "matched/pass")
		})
	}
}
