package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// directory, or on a fresh schema of the PostgreSQL at storeURL; opts
// change its configuration.
func startServer(b *testing.B, storeURL string, opts ...func(*server.Config)) *server.Server {
	dir, err := os.MkdirTemp("", "anylift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	if storeURL != "" {
		storeURL = freshSchema(b, storeURL)
		lastSchemaDSN = storeURL
	}
	cfg := server.Config{
		Listen: "127.0.0.1:0", DataDir: dir, Store: storeURL, Region: apitest.Region, AccountID: accountID,
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey},
		// Every request passes the per-key rate limiter, whose limit is
		// too high to refuse any: what the check costs is measured.
		RateLimit: access.Rate{PerSecond: access.MaxRate, Burst: access.MaxBurst},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
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

// pgWork is what a PostgreSQL database has done so far: the transactions
// committed in it (pg_stat_database.xact_commit, read-only ones included)
// and the transaction ids handed out in the cluster (one per transaction
// that wrote, committed or not).
type pgWork struct{ commits, xids int64 }

// readPGWork reads pgWork for the database of dsn. Other connections'
// commits reach pg_stat_database when they flush their statistics: about a
// second behind while they are busy, so a run of several seconds or more
// reads it to within a few percent.
func readPGWork(b *testing.B, dsn string) pgWork {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var w pgWork
	if os.Getenv("ANYLIFT_BENCH_PGSS") != "" {
		// The statements' counts from here (pg_stat_statements, which the
		// database must preload): reportPGWork logs them per operation.
		if _, err := db.Exec(`SELECT pg_stat_statements_reset()`); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.QueryRow(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&w.commits); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&w.xids); err != nil {
		b.Fatal(err)
	}
	return w
}

// reportPGWork reports the database work per operation since before: the
// transactions committed and the writing transactions, background loops
// of the nodes included (and anything else using the database meanwhile).
func reportPGWork(b *testing.B, dsn string, before pgWork, ops int) {
	if os.Getenv("ANYLIFT_BENCH_PGSS") != "" {
		logStatements(b, dsn, ops)
	}
	after := readPGWork(b, dsn)
	b.ReportMetric(float64(after.commits-before.commits)/float64(ops), "pg-commits/op")
	b.ReportMetric(float64(after.xids-before.xids)/float64(ops), "pg-writes/op")
}

// logStatements logs the statements run since readPGWork reset
// pg_stat_statements (ANYLIFT_BENCH_PGSS=1), most called first: calls and
// execution plus planning milliseconds per operation.
func logStatements(b *testing.B, dsn string, ops int) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT calls, total_exec_time + total_plan_time, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY calls DESC LIMIT 60`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out strings.Builder
	fmt.Fprintf(&out, "%9s %9s  statement (per op)\n", "calls", "ms")
	for rows.Next() {
		var calls int64
		var ms float64
		var q string
		if err := rows.Scan(&calls, &ms, &q); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&out, "%9.3f %9.4f  %s\n", float64(calls)/float64(ops), ms/float64(ops), q)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	b.Log("\n" + out.String())
}

// cpuWork is CPU time spent so far: by this process (the nodes, and the
// load generator and game server processes the benchmark runs in it), by
// the PostgreSQL server's processes on this machine, those that ended
// included (their time is added to the postmaster's children's), and by
// the etcd and kube-apiserver this process started (kubetest).
type cpuWork struct{ self, pg, kube time.Duration }

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

func readCPUWork(b *testing.B) cpuWork {
	var w cpuWork
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	w.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// ANYLIFT_BENCH_PG_PID, a postmaster's pid, counts only that server's
	// processes: other PostgreSQL servers on the machine are left out.
	postmaster := os.Getenv("ANYLIFT_BENCH_PG_PID")
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15) cutime(16) cstime(17)
		s := string(raw)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 15 {
			continue
		}
		num := func(i int) time.Duration { v, _ := strconv.ParseInt(f[i], 10, 64); return time.Duration(v) * clockTick }
		switch comm := s[open+1 : close]; {
		case comm == "postgres":
			if pid := strings.TrimSpace(s[:open]); postmaster != "" && pid != postmaster && f[1] != postmaster {
				continue
			}
		case (comm == "etcd" || comm == "kube-apiserver") && f[1] == strconv.Itoa(os.Getpid()):
			w.kube += num(11) + num(12)
			continue
		default:
			continue
		}
		// utime and stime, and the times of its ended children, which only
		// the postmaster has (every other PostgreSQL process is its child).
		w.pg += num(11) + num(12) + num(13) + num(14)
	}
	return w
}

// reportCPUWork reports CPU milliseconds per operation since before: the
// benchmark's process (an upper bound of the nodes' own share) and the
// database's.
func reportCPUWork(b *testing.B, before cpuWork, ops int) {
	after := readCPUWork(b)
	b.ReportMetric(float64((after.self-before.self).Microseconds())/1000/float64(ops), "cpu-ms/op")
	b.ReportMetric(float64((after.pg-before.pg).Microseconds())/1000/float64(ops), "pg-cpu-ms/op")
}

// reportSelfCPU reports CPU milliseconds per operation since before spent
// by this process, and by the etcd and kube-apiserver it started when
// there are any.
func reportSelfCPU(b *testing.B, before cpuWork, ops int) {
	after := readCPUWork(b)
	b.ReportMetric(float64((after.self-before.self).Microseconds())/1000/float64(ops), "cpu-ms/op")
	if after.kube > 0 {
		b.ReportMetric(float64((after.kube-before.kube).Microseconds())/1000/float64(ops), "kube-cpu-ms/op")
	}
}
