package sqldb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/store/sqldb"
)

// A claim from memory finds its row by its primary key on PostgreSQL,
// also on a table that has never been analyzed (autovacuum off, or not
// run yet): there the planner once took the partial index of free
// processes, whose predicate the claim's conditions implied, and walked
// every free process of the fleet at each claim. Both the plan for the
// values (a custom plan) and the generic plan of the prepared statement
// are checked.
func TestClaimFindsItsRowByKey(t *testing.T) {
	ctx := context.Background()
	_, raw := freshPostgres(t) // the store migrates the schema
	if _, err := raw.Exec(`INSERT INTO processes (fleet_id, compute, pid, location, status, healthy, connected, created, doc, version)
		SELECT 'fleet-1', 'compute-' || (g % 4), 'pid-' || g, 'custom-a', 'ACTIVE', 1, 1, g, '{}', 1 FROM generate_series(1, 2000) g`); err != nil {
		t.Fatal(err)
	}
	args := []string{"'gsess-1'", "'fleet-1'", "'compute-1'", "'pid-5'", "1"}
	literal := sqldb.ClaimAtVersion
	numbered := sqldb.ClaimAtVersion
	for i, a := range args {
		literal = strings.Replace(literal, "?", a, 1)
		numbered = strings.Replace(numbered, "?", fmt.Sprintf("$%d", i+1), 1)
	}
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	plan := func(q string) string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, "EXPLAIN "+q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	check := func(name, p string) {
		t.Helper()
		if !strings.Contains(p, "processes_pkey") {
			t.Errorf("the claim's %s plan does not find the row by its key:\n%s", name, p)
		}
	}
	check("custom", plan(literal))
	for _, q := range []string{`SET plan_cache_mode = force_generic_plan`,
		`PREPARE claim(text, text, text, text, bigint) AS ` + numbered} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	check("generic", plan("EXECUTE claim("+strings.Join(args, ", ")+")"))
}
