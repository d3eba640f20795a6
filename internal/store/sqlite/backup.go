package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/anylift/anylift/internal/store/sqldb"
)

// Copy describes a backup written or a store restored.
type Copy struct {
	File    string // the backup file
	Bytes   int64  // its size
	Version int    // its schema version
}

// Backup writes a consistent copy of the store in dir to file, while a
// server may be running on dir and writing to it.
//
// It never opens the store as Open does (that needs the directory's lock,
// which a running server holds): it reads the database through a
// read-only connection of its own and has SQLite write the copy with
// VACUUM INTO. The copy is one read transaction's snapshot: every
// transaction committed before Backup began is in it, those still in the
// write-ahead log included, and nothing half-written. Writers go on
// meanwhile; the log cannot be checkpointed past the snapshot until the
// copy is done, so it grows for that long.
//
// The copy is a self-contained database file (rollback journal, no -wal
// beside it), checked with integrity_check and synced before it takes
// file's name; an existing file is never overwritten.
func Backup(ctx context.Context, dir, file string) (Copy, error) {
	src := filepath.Join(dir, FileName)
	if _, err := os.Stat(src); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Copy{}, fmt.Errorf("no Anylift store in %s (no %s there)", dir, FileName)
		}
		return Copy{}, err
	}
	if _, err := os.Lstat(file); err == nil {
		return Copy{}, fmt.Errorf("%s already exists: a backup never overwrites, give a new name", file)
	}
	// The copy is written beside its final name, then renamed: a file of
	// that name is always a complete backup. VACUUM INTO accepts an empty
	// file as its target.
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.partial")
	if err != nil {
		return Copy{}, fmt.Errorf("backup file: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	done := false
	defer func() {
		if !done {
			os.Remove(tmpPath)
		}
	}()

	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	ro, err := sql.Open("sqlite", "file:"+src+"?"+q.Encode())
	if err != nil {
		return Copy{}, err
	}
	defer ro.Close()
	ro.SetMaxOpenConns(1)
	if _, err := anyliftSchema(ctx, ro, src); err != nil {
		return Copy{}, err
	}
	if _, err := ro.ExecContext(ctx, `VACUUM INTO ?`, tmpPath); err != nil {
		return Copy{}, fmt.Errorf("copying %s: %w", src, err)
	}
	ro.Close()

	version, err := check(ctx, tmpPath, "the copy of "+src, nil)
	if err != nil {
		return Copy{}, err
	}
	size, err := syncFile(tmpPath)
	if err != nil {
		return Copy{}, err
	}
	// Link rather than rename: it fails, rather than replaces, when file
	// has appeared meanwhile.
	if err := os.Link(tmpPath, file); errors.Is(err, fs.ErrExist) {
		return Copy{}, fmt.Errorf("%s already exists: a backup never overwrites, give a new name", file)
	} else if err != nil {
		// A file system without hard links: rename, as Link would have.
		if err := os.Rename(tmpPath, file); err != nil {
			return Copy{}, fmt.Errorf("backup file: %w", err)
		}
	}
	os.Remove(tmpPath)
	done = true
	if err := syncDir(filepath.Dir(file)); err != nil {
		return Copy{}, err
	}
	return Copy{File: file, Bytes: size, Version: version}, nil
}

// Restore makes dir a data directory holding the store backed up in file,
// which a server then opens with the state the backup had. It refuses a
// dir that already holds a store, and a file that is not an intact
// Anylift store of a schema this binary knows (an older schema is fine:
// the server migrates it at start). The directory is locked meanwhile, so
// no server starts on it half-restored.
func Restore(ctx context.Context, file, dir string) (Copy, error) {
	in, err := os.Open(file)
	if err != nil {
		return Copy{}, fmt.Errorf("backup file: %w", err)
	}
	defer in.Close()
	if err := noStore(dir); err != nil {
		return Copy{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Copy{}, fmt.Errorf("data directory: %w", err)
	}
	release, err := lockDir(dir)
	if err != nil {
		return Copy{}, err
	}
	defer release()
	if err := noStore(dir); err != nil { // again, under the lock
		return Copy{}, err
	}

	dst := filepath.Join(dir, FileName)
	tmpPath := dst + ".restoring"
	for _, p := range []string{tmpPath, tmpPath + "-journal", tmpPath + "-wal", tmpPath + "-shm"} {
		os.Remove(p) // left by an interrupted restore
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmpPath)
		}
	}()
	out, err := os.OpenFile(tmpPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Copy{}, err
	}
	size, err := io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if e := out.Close(); err == nil {
		err = e
	}
	if err != nil {
		return Copy{}, fmt.Errorf("copying %s: %w", file, err)
	}
	known, knownVersion, err := sqldb.KnownSchema(mustSub(migrations, "migrations"))
	if err != nil {
		return Copy{}, err
	}
	version, err := check(ctx, tmpPath, file, func(applied []string) error {
		err := sqldb.CheckSchema(applied, known, knownVersion)
		var tooNew *sqldb.SchemaTooNewError
		if errors.As(err, &tooNew) {
			tooNew.Store = file
		}
		return err
	})
	if err != nil {
		return Copy{}, err
	}
	if _, err := syncFile(tmpPath); err != nil {
		return Copy{}, err
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return Copy{}, err
	}
	done = true
	if err := syncDir(dir); err != nil {
		return Copy{}, err
	}
	return Copy{File: file, Bytes: size, Version: version}, nil
}

// noStore fails when dir holds a store (or what is left of one).
func noStore(dir string) error {
	for _, name := range []string{FileName, FileName + "-wal"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s already holds a store (%s): restore into a new directory", dir, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// check opens the database file at path on its own (the file is a copy
// nobody else uses), has SQLite check it whole, and checks that it is an
// Anylift store (name is the file's name in messages); schema, when not nil, judges its applied migrations. It
// leaves the file in rollback-journal mode, self-contained, and returns
// its schema version.
func check(ctx context.Context, path, name string, schema func(applied []string) error) (int, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil {
		return 0, fmt.Errorf("%s: %w", name, notStore(err))
	}
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, notStore(err))
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return 0, err
		}
		if s != "ok" && len(problems) < 5 {
			problems = append(problems, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, notStore(err))
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("%s is damaged (integrity_check: %s)", name, strings.Join(problems, "; "))
	}
	applied, err := anyliftSchema(ctx, db, name)
	if err != nil {
		return 0, err
	}
	if schema != nil {
		if err := schema(applied); err != nil {
			return 0, err
		}
	}
	version := 0
	for _, n := range applied {
		version = max(version, sqldb.SchemaVersion(n))
	}
	return version, db.Close()
}

// anyliftSchema returns the migrations applied to the database behind db,
// failing when it is not an Anylift store: one without schema_migrations,
// or whose migrations include none of this binary's (every Anylift store
// has the first).
func anyliftSchema(ctx context.Context, db *sql.DB, name string) ([]string, error) {
	applied, err := sqldb.AppliedMigrations(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%s is not an Anylift store: %w", name, notStore(err))
	}
	known, _, err := sqldb.KnownSchema(mustSub(migrations, "migrations"))
	if err != nil {
		return nil, err
	}
	for _, n := range applied {
		if len(known) > 0 && n == known[0] {
			return applied, nil
		}
	}
	return nil, fmt.Errorf("%s is not an Anylift store (its schema_migrations lacks %s)", name, known[0])
}

// notStore rewords what SQLite says of a file that is not a database, or
// a damaged one.
func notStore(err error) error {
	switch {
	case err == nil:
	case strings.Contains(err.Error(), "file is not a database"):
		return errors.New("not an SQLite database")
	case strings.Contains(err.Error(), "malformed"):
		return fmt.Errorf("damaged: %w", err)
	}
	return err
}

// syncFile syncs the file at path and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), f.Close()
}

// syncDir makes a rename or link in dir durable. Windows has no such call;
// NTFS journals the change itself.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
