package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
)

func addLocations(t *testing.T, st store.Store, from, n int) {
	t.Helper()
	err := st.Update(context.Background(), func(tx store.Tx) error {
		for i := from; i < from+n; i++ {
			name := fmt.Sprintf("custom-loc-%d", i)
			if err := tx.InsertLocation(&game.Location{Name: name, ARN: "arn:aws:gamelift:us-west-2::location/" + name, CreationTime: time.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// countLocations counts the locations in the database file at path,
// opened on its own (no -wal beside it is read unless there is one).
func countLocations(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM locations`).Scan(&n); err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return 0
		}
		t.Fatal(err)
	}
	return n
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Commits still in the write-ahead log (not yet checkpointed into the
// database file) are in the backup: of a store held open by a server, and
// of a directory left by a server that was killed.
func TestBackupReadsTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	addLocations(t, st, 0, 30)

	// The database file alone lacks them: they are in the log.
	alone := filepath.Join(t.TempDir(), "alone.db")
	copyFile(t, filepath.Join(dir, sqlite.FileName), alone)
	if n := countLocations(t, alone); n != 0 {
		t.Fatalf("the database file alone holds %d locations: the writes were checkpointed, the test shows nothing", n)
	}

	file := filepath.Join(t.TempDir(), "backup.db")
	c, err := sqlite.Backup(ctx, dir, file)
	if err != nil {
		t.Fatal(err)
	}
	if n := countLocations(t, file); n != 30 {
		t.Fatalf("backup holds %d locations, want 30", n)
	}
	if _, err := os.Stat(file + "-wal"); err == nil {
		t.Fatal("the backup has a -wal beside it: it is not self-contained")
	}
	if c.Version != sqldb.SchemaVersion(lastMigration(t)) || c.Bytes == 0 {
		t.Fatalf("backup: %+v", c)
	}
	// The store goes on after the backup.
	addLocations(t, st, 30, 5)

	// A directory as a kill -9 leaves it: database, log and index, no
	// process. (The files are copied while nothing writes.)
	killed := t.TempDir()
	for _, name := range []string{sqlite.FileName, sqlite.FileName + "-wal", sqlite.FileName + "-shm"} {
		copyFile(t, filepath.Join(dir, name), filepath.Join(killed, name))
	}
	file2 := filepath.Join(t.TempDir(), "backup.db")
	if _, err := sqlite.Backup(ctx, killed, file2); err != nil {
		t.Fatal(err)
	}
	if n := countLocations(t, file2); n != 35 {
		t.Fatalf("backup of a killed server's directory holds %d locations, want 35", n)
	}

	// Restored, it opens as a store with the same state.
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := sqlite.Restore(ctx, file2, restored); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(ctx, restored, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var locs []*game.Location
	err = again.View(ctx, func(tx store.Tx) error {
		var err error
		locs, _, err = tx.ListLocations(store.Page{Limit: 100})
		return err
	})
	if err != nil || len(locs) != 35 {
		t.Fatalf("restored store: %d locations, %v", len(locs), err)
	}
}

func lastMigration(t *testing.T) string {
	names, _, err := sqldb.KnownSchema(os.DirFS("migrations"))
	if err != nil || len(names) == 0 {
		t.Fatal(err)
	}
	return names[len(names)-1]
}

// Restore refuses, leaving the new directory without a store, a file that
// is not an SQLite database, an SQLite database that is not an Anylift
// store, a damaged store, a store of a newer schema, and a directory that
// holds a store already. Backup refuses a directory without a store.
func TestRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	addLocations(t, st, 0, 200)
	good := filepath.Join(t.TempDir(), "good.db")
	if _, err := sqlite.Backup(ctx, dir, good); err != nil {
		t.Fatal(err)
	}
	st.Close()

	src := t.TempDir()
	text := filepath.Join(src, "text.db")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 500)), 0o600)

	other := filepath.Join(src, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`CREATE TABLE schema_migrations (version INTEGER)`)
	db.Close()

	newer := filepath.Join(src, "newer.db")
	copyFile(t, good, newer)
	db, _ = sql.Open("sqlite", newer)
	if _, err := db.Exec(`INSERT INTO schema_migrations (name) VALUES ('999_later.sql')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Which check finds the damage (opening the file, or the integrity
	// check) depends on the pages the bytes below fall on: either names
	// the file and says "damaged".
	damaged := filepath.Join(src, "corrupt.db")
	b, _ := os.ReadFile(good)
	for i := len(b) / 2; i < len(b)/2+3000; i++ {
		b[i] ^= 0x5a
	}
	os.WriteFile(damaged, b, 0o600)

	for _, c := range []struct {
		file, want string
	}{
		{text, text + ": not an SQLite database"},
		{other, other + " is not an Anylift store"},
		{damaged, "damaged"},
		{newer, fmt.Sprintf("the store at %s has schema version 999, newer than this anylift knows (%d): upgrade anylift", newer, sqldb.SchemaVersion(lastMigration(t)))},
		{filepath.Join(src, "missing.db"), "no such file"},
	} {
		into := filepath.Join(t.TempDir(), "new")
		_, err := sqlite.Restore(ctx, c.file, into)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Restore(%s): %v, want %q", filepath.Base(c.file), err, c.want)
			continue
		}
		t.Logf("Restore(%s): %v", filepath.Base(c.file), err)
		if _, err := os.Stat(filepath.Join(into, sqlite.FileName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Restore(%s) left a store behind: %v", filepath.Base(c.file), err)
		}
		if ents, _ := os.ReadDir(into); len(ents) > 1 { // the lock file
			t.Errorf("Restore(%s) left %d files behind", filepath.Base(c.file), len(ents))
		}
	}

	if _, err := sqlite.Restore(ctx, good, dir); err == nil || !strings.Contains(err.Error(), "already holds a store") {
		t.Errorf("Restore into a store's directory: %v", err)
	}
	if _, err := sqlite.Backup(ctx, t.TempDir(), filepath.Join(t.TempDir(), "x.db")); err == nil || !strings.Contains(err.Error(), "no Anylift store") {
		t.Errorf("Backup of an empty directory: %v", err)
	}
}
