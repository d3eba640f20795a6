package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLastLines: the last lines of a log, without blank lines or carriage
// returns, and without the line cut by the byte limit; nothing for a
// missing file.
func TestLastLines(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body string
		n          int
		limit      int64
		want       []string
	}{
		{"short", "one\r\n\ntwo\n  \nthree", 10, 1024, []string{"one", "two", "three"}},
		{"last n", "a\nb\nc\nd\n", 2, 1024, []string{"c", "d"}},
		{"cut by the limit", strings.Repeat("x", 100) + "\nkept 1\nkept 2\n", 10, 10, []string{"kept 2"}},
		{"one long line", strings.Repeat("y", 100), 10, 16, []string{strings.Repeat("y", 16)}},
		{"empty", "", 10, 1024, nil},
	} {
		if got := lastLines(write(tc.name, tc.body), tc.n, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := lastLines(filepath.Join(dir, "missing"), 10, 1024); got != nil {
		t.Errorf("missing file: %q", got)
	}
}
