// Package storetestenv finds the PostgreSQL the tests may use and makes an
// isolated schema on it for each test.
package storetestenv

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/game"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// PostgresDSN returns ANYLIFT_TEST_POSTGRES. Under CI=true an unset DSN
// fails the test: CI must run the PostgreSQL half of every suite.
func PostgresDSN(t testing.TB) string {
	dsn := os.Getenv("ANYLIFT_TEST_POSTGRES")
	if dsn == "" && os.Getenv("CI") == "true" {
		t.Fatal("CI=true but ANYLIFT_TEST_POSTGRES is not set: the PostgreSQL suite must run in CI")
	}
	return dsn
}

// FreshSchema creates an empty schema for t and returns a DSN whose
// search_path is that schema. The schema is dropped at cleanup.
func FreshSchema(t testing.TB, dsn string) string {
	t.Helper()
	name := "t_" + strings.ReplaceAll(game.NewUUID(), "-", "")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), "CREATE SCHEMA "+name); err != nil {
		db.Close()
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		db.ExecContext(context.Background(), "DROP SCHEMA "+name+" CASCADE")
		db.Close()
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
