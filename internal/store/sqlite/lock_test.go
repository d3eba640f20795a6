package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/anylift/anylift/internal/store/sqlite"
)

// TestOneStorePerDataDir: while a store is open, a second Open of its
// directory fails with InUseError naming the holder; once it is closed
// the directory opens again, even though the lock file is still there.
func TestOneStorePerDataDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Open(ctx, dir, sqlite.Options{})
	var inUse *sqlite.InUseError
	if !errors.As(err, &inUse) || inUse.Holder != fmt.Sprintf("pid %d", os.Getpid()) {
		t.Fatalf("second Open: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sqlite.LockFile)); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}
