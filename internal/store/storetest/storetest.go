// Package storetest is the store conformance suite: every test in it runs
// on SQLite and, when ANYLIFT_TEST_POSTGRES is set, on PostgreSQL.
package storetest

import (
	"context"
	"testing"

	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// Each runs fn as a subtest on a fresh store of every backend.
func Each(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Helper()
	EachDB(t, func(t *testing.T, db *sqldb.DB) { fn(t, db) })
}

// EachDB is Each for tests that need the SQL store itself (its commit
// hook, the memories it feeds): SQLite always, PostgreSQL when
// ANYLIFT_TEST_POSTGRES is set, with and without group commit.
func EachDB(t *testing.T, fn func(t *testing.T, db *sqldb.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
	if storetestenv.PostgresDSN(t) == "" {
		return
	}
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
	// A node owning its fleets commits its writes in groups on
	// PostgreSQL too: the same contract holds there.
	t.Run("postgres-grouped", func(t *testing.T) {
		db := Postgres(t)
		db.EnableGroupCommit()
		fn(t, db)
	})
}

// Postgres opens a fresh schema of the PostgreSQL of
// ANYLIFT_TEST_POSTGRES, which must be set, closed when t ends.
func Postgres(t testing.TB) *sqldb.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), storetestenv.FreshSchema(t, storetestenv.PostgresDSN(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Update runs fn in a write transaction and fails the test on error.
func Update(t *testing.T, st store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// View runs fn in a read transaction and fails the test on error.
func View(t *testing.T, st store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := st.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}
