// Package sqlite opens Anylift's embedded store: SQLite through a cgo-free
// driver, in WAL mode, with one writer connection and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/anylift/anylift/internal/store/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file's name inside the data directory.
const FileName = "anylift.db"

// Options tune the embedded store.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default) syncs the
	// WAL at every commit, so nothing acknowledged is lost even on power
	// failure; NORMAL survives process crashes (kill -9) but not power loss.
	Synchronous string
	// NoGroupCommit commits each write transaction on its own instead of
	// together with the others waiting (see sqldb.EnableGroupCommit).
	NoGroupCommit bool
}

// Open opens (creating if needed) the store in dir and applies migrations.
// The directory is this process's until the store is closed: a second
// Open, here or in another process, fails with *InUseError. One server per
// store: it keeps the live game sessions in memory, fed by its own
// commits, and pushes only to the game servers connected to it.
func Open(ctx context.Context, dir string, opts Options) (*sqldb.DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	syncMode := strings.ToUpper(opts.Synchronous)
	if syncMode == "" {
		syncMode = "FULL"
	}
	if syncMode != "FULL" && syncMode != "NORMAL" {
		return nil, fmt.Errorf("sqlite synchronous must be FULL or NORMAL, not %q", opts.Synchronous)
	}
	release, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, dir, syncMode, opts)
	if err != nil {
		release()
		return nil, err
	}
	db.OnClose(release)
	return db, nil
}

func open(ctx context.Context, dir, syncMode string, opts Options) (*sqldb.DB, error) {
	path := filepath.Join(dir, FileName)
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+syncMode+")")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	// Savepoints (group commit) journal into temporary storage: keep it in
	// memory rather than in temporary files.
	q.Add("_pragma", "temp_store(MEMORY)")
	readDSN := "file:" + path + "?" + q.Encode() + "&_pragma=query_only(1)"
	checkpointDSN := "file:" + path + "?" + q.Encode()
	// SQLite's own checkpoints are only a bound for the writer
	// (checkpoint.go). Its page cache stays at SQLite's 2 MiB: at 64 MiB
	// the reads of pages written at random across 100,000 sessions were
	// system calls less often, but ending each write transaction walked
	// the cache's whole hash table (pcache1TruncateUnsafe), which cost the
	// committer five times what it saved (profiled).
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerAutocheckpoint))
	writeDSN := "file:" + path + "?" + q.Encode() + "&_txlock=immediate"

	ckdb, err := sql.Open("sqlite", checkpointDSN)
	if err != nil {
		return nil, err
	}
	ckdb.SetMaxOpenConns(1)
	ckdb.SetMaxIdleConns(1)
	ckdb.SetConnMaxLifetime(0)
	ck := newCheckpointer(ckdb)
	write := sql.OpenDB(&hookedConnector{dsn: writeDSN, drv: &sqlite.Driver{}, onCommit: ck.committed})
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	read, err := sql.Open("sqlite", readDSN)
	if err != nil {
		write.Close()
		ck.close()
		return nil, err
	}
	n := runtime.GOMAXPROCS(0) * 2
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxLifetime(0)

	db := sqldb.New(write, read, sqldb.Dialect{
		Name:        "sqlite",
		IsUnique:    isUnique,
		IsRetryable: isBusy,
	})
	// Closed after the pools: the writer's last commit has asked for its
	// checkpoint by then, and closing the last connection checkpoints.
	db.OnClose(ck.close)
	if err := db.Migrate(ctx, mustSub(migrations, "migrations")); err != nil {
		db.Close()
		var tooNew *sqldb.SchemaTooNewError
		if errors.As(err, &tooNew) {
			tooNew.Store = path
		}
		return nil, err
	}
	ck.armed.Store(true) // the migrations' commits ask for no checkpoint
	db.KeepRecords()     // this process is the store's only writer (lockDir)
	if !opts.NoGroupCommit {
		db.EnableGroupCommit()
	}
	return db, nil
}

func isUnique(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func isBusy(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED
	}
	return false
}
