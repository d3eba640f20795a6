package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/anylift/anylift/internal/store/sqlite"
)

// The writer does not checkpoint the log itself: fewer than
// sqlite.CheckpointEvery commits stay in the log, and the checkpointer copies
// them into the database file on its own connection at the
// sqlite.CheckpointEvery-th commit, while the store stays open.
func TestCheckpointsOffTheWriter(t *testing.T) {
	type result struct{ log, copied int }
	done := make(chan result, 4)
	sqlite.SetCheckpointed(func(log, copied int, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- result{log, copied}
	})
	defer sqlite.SetCheckpointed(nil)

	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range sqlite.CheckpointEvery - 1 {
		addLocations(t, st, i, 1)
	}
	alone := filepath.Join(t.TempDir(), "alone.db")
	copyFile(t, filepath.Join(dir, sqlite.FileName), alone)
	if n := countLocations(t, alone); n != 0 {
		t.Fatalf("after %d commits the database file alone holds %d locations: something checkpointed", sqlite.CheckpointEvery-1, n)
	}
	select {
	case r := <-done:
		t.Fatalf("a checkpoint before the %dth commit: %+v", sqlite.CheckpointEvery, r)
	default:
	}

	addLocations(t, st, sqlite.CheckpointEvery-1, 1)
	r := <-done
	if r.log == 0 || r.copied != r.log {
		t.Fatalf("checkpoint: %+v, want every frame of the log copied", r)
	}
	copyFile(t, filepath.Join(dir, sqlite.FileName), alone)
	// The commit that asks for the checkpoint may or may not be in the log
	// yet when the checkpoint runs (the hook runs inside the commit); the
	// ones before it are.
	if n := countLocations(t, alone); n < sqlite.CheckpointEvery-1 {
		t.Fatalf("after the checkpoint the database file alone holds %d locations, want at least %d", n, sqlite.CheckpointEvery-1)
	}
}
