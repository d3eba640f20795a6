package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/storetestenv"
)

// freshStore opens a store on a fresh schema, and a plain connection to
// the same schema, both closed when tb ends; it skips tb when PostgreSQL
// is not configured.
func freshStore(tb testing.TB) (*sqldb.DB, *sql.DB) {
	tb.Helper()
	dsn := storetestenv.PostgresDSN(tb)
	if dsn == "" {
		tb.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	schema := storetestenv.FreshSchema(tb, dsn)
	db, err := Open(context.Background(), schema)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	raw, err := sql.Open("pgx", schema)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	return db, raw
}

// seedHeld opens a fresh store (freshStore) holding n connected, ACTIVE
// server processes over 20 fleets, every one held by node "n1".
func seedHeld(tb testing.TB, n int) (*sqldb.DB, *sql.DB) {
	tb.Helper()
	db, raw := freshStore(tb)
	for _, q := range []string{
		`INSERT INTO nodes (id, address, started, heartbeat) VALUES ('n1', 'http://127.0.0.1:1', 1, 1)`,
		`INSERT INTO processes (fleet_id, compute, pid, location, status, healthy, connected, created, doc)
			SELECT 'fleet-' || (i % 20), 'compute-' || (i % 500), 'pid-' || i, 'custom-a', 'ACTIVE', 1, 1, i, '{}'
			FROM generate_series(1, $1) AS i`,
		// Fresh heartbeats, tokens valid for an hour (epoch milliseconds).
		`UPDATE processes SET last_heartbeat = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT),
			token_expires = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 3600000`,
		`INSERT INTO process_holders (fleet_id, compute, pid, node_id) SELECT fleet_id, compute, pid, 'n1' FROM processes`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{n}
		}
		if _, err := raw.Exec(q, args...); err != nil {
			tb.Fatal(err)
		}
	}
	return db, raw
}

// stranded runs the stranded-processes sweep's query for node n1.
func stranded(tb testing.TB, db *sqldb.DB) []store.ProcessKey {
	tb.Helper()
	var out []store.ProcessKey
	if err := db.View(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.StrandedProcesses("n1", 100)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

// The stranded-processes sweep runs after every heartbeat of every node.
// With none of a node's processes disconnected (nearly always), it must
// not read each process the node holds: on PostgreSQL too it first asks
// the partial index of the disconnected processes, and the database
// answers that from the index alone, on a table never analyzed as on one
// analyzed. A process that disconnects is then found.
func TestStrandedSweepAsksTheDisconnectedIndex(t *testing.T) {
	db, raw := seedHeld(t, 2000)
	plan := func() string {
		rows, err := raw.Query(`EXPLAIN SELECT 1 FROM processes WHERE connected = 0 AND status <> 'TERMINATED' LIMIT 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, line)
		}
		return b.String()
	}
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := raw.Exec(`ANALYZE processes`); err != nil {
				t.Fatal(err)
			}
		}
		if p := plan(); !strings.Contains(p, "processes_disconnected") {
			t.Errorf("analyzed %v: the disconnected processes are not read from their index:\n%s", analyzed, p)
		}
		if got := stranded(t, db); len(got) != 0 {
			t.Fatalf("analyzed %v: %d stranded processes, want none", analyzed, len(got))
		}
	}
	if _, err := raw.Exec(`UPDATE processes SET connected = 0 WHERE pid IN ('pid-7', 'pid-1500')`); err != nil {
		t.Fatal(err)
	}
	got := stranded(t, db)
	if len(got) != 2 || got[0].PID != "pid-1500" || got[1].PID != "pid-7" {
		t.Errorf("stranded %v, want pid-1500 and pid-7", got)
	}
}

// seedAnalyzed is seedHeld with the benchmarks' 100,000 processes, the
// planner's statistics taken.
func seedAnalyzed(b *testing.B) *sqldb.DB {
	db, raw := seedHeld(b, 100_000)
	if _, err := raw.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkStrandedSweep is one run of the stranded-processes sweep on a
// node holding 100,000 connected processes, none of them disconnected.
//
//	ANYLIFT_TEST_POSTGRES=… go test ./internal/store/postgres -run '^$' -bench StrandedSweep
func BenchmarkStrandedSweep(b *testing.B) {
	db := seedAnalyzed(b)
	for b.Loop() {
		if got := stranded(b, db); len(got) != 0 {
			b.Fatalf("%d stranded processes, want none", len(got))
		}
	}
}

// BenchmarkStaleSweep is one run of the server-process timer's query
// (lost, unhealthy, token to refresh) over 100,000 connected, healthy
// processes, none of them due.
//
//	ANYLIFT_TEST_POSTGRES=… go test ./internal/store/postgres -run '^$' -bench StaleSweep
func BenchmarkStaleSweep(b *testing.B) {
	db := seedAnalyzed(b)
	now := time.Now()
	for b.Loop() {
		if err := db.View(context.Background(), func(tx store.Tx) error {
			stale, err := tx.StaleProcesses(now.Add(-time.Minute), now.Add(-time.Minute), now.Add(time.Minute), 200)
			if err == nil && len(stale) != 0 {
				err = fmt.Errorf("%d stale processes, want none", len(stale))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextStale is one reading of when the first of 100,000
// connected, healthy processes will be due for the server-process timer:
// what the timer reads, at most once per lost-process grace, while none
// is due.
//
//	ANYLIFT_TEST_POSTGRES=… go test ./internal/store/postgres -run '^$' -bench NextStale
func BenchmarkNextStale(b *testing.B) {
	db := seedAnalyzed(b)
	now := time.Now()
	for b.Loop() {
		if err := db.View(context.Background(), func(tx store.Tx) error {
			next, err := tx.NextStale(30*time.Second, 3*time.Minute, 2*time.Minute)
			if err == nil && next.Before(now) {
				err = fmt.Errorf("a process is due at %v, want none before %v", next, now)
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
