package bench

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
)

const accountID = "123456789012"

// lastSchemaDSN is the PostgreSQL DSN of the last server started, for
// seeding code that talks to the database directly.
var lastSchemaDSN string

// postgresDSN is the PostgreSQL the PostgreSQL variants run on, if any.
func postgresDSN() string { return os.Getenv("ANYLIFT_TEST_POSTGRES") }

// cleanups run after every benchmark: the seeded servers live for the
// whole run, so they are closed here rather than by one benchmark.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}

// startServer starts a server for the whole run: on a temporary SQLite
// directory, or on a fresh schema of the PostgreSQL at storeURL.
func startServer(b *testing.B, storeURL string) *server.Server {
	dir, err := os.MkdirTemp("", "anylift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	if storeURL != "" {
		storeURL = freshSchema(b, storeURL)
		lastSchemaDSN = storeURL
	}
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", DataDir: dir, Store: storeURL, Region: apitest.Region, AccountID: accountID,
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey},
		// Every request passes the per-key rate limiter, whose limit is
		// too high to refuse any: what the check costs is measured.
		RateLimit: access.Rate{PerSecond: access.MaxRate, Burst: access.MaxBurst},
	})
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return srv
}

func freshSchema(b *testing.B, dsn string) string {
	name := "bench_" + strings.ReplaceAll(game.NewUUID(), "-", "")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { db.Exec("DROP SCHEMA " + name + " CASCADE"); db.Close() })
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// analyze gathers PostgreSQL's statistics after the bulk seed, as
// autovacuum would shortly after such a load, so plans are those of a
// database in service rather than of one loaded a second ago.
func analyze(b *testing.B, schemaDSN string) {
	db, err := sql.Open("pgx", schemaDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ANALYZE"); err != nil {
		b.Fatal(err)
	}
}
