package postgres

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"
)

// A migration that deadlocks with a transaction of a node still serving
// (an earlier build, during a rolling upgrade) is PostgreSQL's victim,
// rolled back whole; it is tried again and lands. The deadlock is real:
// the serving transaction holds processes and then asks for
// game_sessions while the migration, altering game_sessions first, waits
// for processes.
func TestMigrationRetriedAfterDeadlock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, raw := freshStore(t)

	next := fstest.MapFS{"999_test.sql": {Data: []byte(
		"ALTER TABLE game_sessions ADD COLUMN test_a INT;\nALTER TABLE processes ADD COLUMN test_b INT;\n")}}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(sub, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := fs.ReadFile(sub, n)
		if err != nil {
			t.Fatal(err)
		}
		next[n] = &fstest.MapFile{Data: b}
	}
	var before int64
	deadlocks := `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`
	if err := raw.QueryRowContext(ctx, deadlocks).Scan(&before); err != nil {
		t.Fatal(err)
	}

	serving, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer serving.Rollback()
	// The serving transaction waits long before it looks for a deadlock,
	// so that the migration, waiting first with the default second, is
	// the one PostgreSQL refuses.
	for _, q := range []string{`SET LOCAL deadlock_timeout = '30s'`, `LOCK TABLE processes IN ROW EXCLUSIVE MODE`} {
		if _, err := serving.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- db.Migrate(ctx, next) }()
	// Wait until the migration holds game_sessions and waits for processes.
	for {
		var waiting bool
		err := raw.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
			WHERE NOT granted AND relation = 'processes'::regclass)`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the migration ended before it waited for processes: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := serving.ExecContext(ctx, `LOCK TABLE game_sessions IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatalf("the serving transaction: %v", err)
	}
	if err := serving.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the migration: %v", err)
	}
	var after int64
	if err := raw.QueryRowContext(ctx, deadlocks).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Error("PostgreSQL saw no deadlock: the test did not make one")
	}
	for _, col := range []string{"game_sessions.test_a", "processes.test_b"} {
		var n int
		err := raw.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name || '.' || column_name = $1`, col).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("column %s: %d, want 1", col, n)
		}
	}
}
