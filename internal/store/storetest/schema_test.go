package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// knownVersion is the newest schema version among the migrations in dir.
func knownVersion(t *testing.T, dir string) int {
	t.Helper()
	_, v, err := sqldb.KnownSchema(os.DirFS(dir))
	if err != nil || v == 0 {
		t.Fatalf("migrations in %s: %d, %v", dir, v, err)
	}
	return v
}

// A store that a newer anylift has migrated (a migration row this binary
// does not know) is refused at open, naming the store and both versions,
// and is left as it was; a store with an unknown migration of a lower
// number (another build's) is refused too.
func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		row  func(known int) string
		want func(where string, known int) string
	}{{
		row: func(known int) string { return fmt.Sprintf("%d_from_the_future.sql", known+10) },
		want: func(where string, known int) string {
			return fmt.Sprintf("the store at %s has schema version %d, newer than this anylift knows (%d): upgrade anylift", where, known+10, known)
		},
	}, {
		row: func(int) string { return "001_other_build.sql" },
		want: func(where string, known int) string {
			return fmt.Sprintf("the store at %s has migrations this anylift does not know (001_other_build.sql): it was written by another anylift build; run that build or a newer one", where)
		},
	}}
	for i, c := range cases {
		t.Run(fmt.Sprintf("sqlite/%d", i), func(t *testing.T) {
			known := knownVersion(t, "../sqlite/migrations")
			dir := t.TempDir()
			st, err := sqlite.Open(ctx, dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			path := filepath.Join(dir, sqlite.FileName)
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(`INSERT INTO schema_migrations (name) VALUES (?)`, c.row(known)); err != nil {
				t.Fatal(err)
			}
			_, err = sqlite.Open(ctx, dir, sqlite.Options{})
			var tooNew *sqldb.SchemaTooNewError
			if !errors.As(err, &tooNew) || err.Error() != c.want(path, known) {
				t.Fatalf("Open: %v\nwant: %s", err, c.want(path, known))
			}
			var n int
			if err := raw.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != countMigrations(t, "../sqlite/migrations")+1 {
				t.Fatalf("schema_migrations rows after the refusal: %d, %v", n, err)
			}
			// The refusal let the directory go: once the row is gone it opens.
			if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE name = ?`, c.row(known)); err != nil {
				t.Fatal(err)
			}
			st, err = sqlite.Open(ctx, dir, sqlite.Options{})
			if err != nil {
				t.Fatalf("Open once the row is gone: %v", err)
			}
			st.Close()
		})
	}
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		return
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("postgres/%d", i), func(t *testing.T) {
			known := knownVersion(t, "../postgres/migrations")
			schemaDSN := storetestenv.FreshSchema(t, dsn)
			st, err := postgres.Open(ctx, schemaDSN)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			raw, err := sql.Open("pgx", schemaDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(`INSERT INTO schema_migrations (name) VALUES ($1)`, c.row(known)); err != nil {
				t.Fatal(err)
			}
			_, err = postgres.Open(ctx, schemaDSN)
			var tooNew *sqldb.SchemaTooNewError
			if !errors.As(err, &tooNew) {
				t.Fatalf("Open: %v", err)
			}
			// The address is named without a password, with the schema.
			if !strings.HasPrefix(tooNew.Store, "postgres://") || !strings.Contains(tooNew.Store, "search_path=t_") || err.Error() != c.want(tooNew.Store, known) {
				t.Fatalf("Open: %v\nwant: %s", err, c.want(tooNew.Store, known))
			}
		})
	}
}

func countMigrations(t *testing.T, dir string) int {
	names, _, err := sqldb.KnownSchema(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}
