// Package storetest is the store conformance suite: every test in it runs
// on SQLite and, when ANYLIFT_TEST_POSTGRES is set, on PostgreSQL.
package storetest

import (
	"context"
	"testing"

	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// Each runs fn as a subtest on a fresh store of every backend.
func Each(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, st)
	})
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		return
	}
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(context.Background(), storetestenv.FreshSchema(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, st)
	})
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
