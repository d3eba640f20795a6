package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/store/sqlite"
)

// One server per data directory: a second exclusive open fails with a
// clear error while the first holds it, and succeeds once it is closed.
func TestOneOpenPerDirectory(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := sqlite.Open(ctx, dir, sqlite.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, dir, sqlite.Options{Exclusive: true}); err == nil || !strings.Contains(err.Error(), "in use by another anylift server") {
		t.Fatalf("second open: %v, want the directory in use", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(ctx, dir, sqlite.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	again.Close()
}
