package sqldb

import (
	"strings"
	"testing"
)

// Migration names come from a store's schema_migrations, which may hold
// anything: reading and judging them never panics, and a store whose
// names are all known is never refused.
func FuzzCheckSchema(f *testing.F) {
	f.Add("170_matchmaking_tickets.sql\n999_later.sql")
	f.Add("")
	f.Add("99999999999999999999999_x.sql\n-1_x.sql\n\x00")
	known := []string{"010_locations.sql", "170_matchmaking_tickets.sql"}
	f.Fuzz(func(t *testing.T, names string) {
		applied := strings.Split(names, "\n")
		for _, n := range applied {
			if v := SchemaVersion(n); v < 0 {
				t.Fatalf("SchemaVersion(%q) = %d", n, v)
			}
		}
		err := CheckSchema(applied, known, 170)
		allKnown := true
		for _, n := range applied {
			allKnown = allKnown && (n == known[0] || n == known[1])
		}
		if allKnown != (err == nil) {
			t.Fatalf("CheckSchema(%q) = %v", applied, err)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty message")
		}
	})
}
