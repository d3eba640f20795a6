package agent

import (
	"slices"
	"testing"
)

func TestSplitParameters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"-port 7777  -map dust", []string{"-port", "7777", "-map", "dust"}},
		{`-name "my server" -motd 'hi there'`, []string{"-name", "my server", "-motd", "hi there"}},
		{`a\ b "c\"d" 'e\f'`, []string{"a b", `c"d`, `e\f`}},
		{`""`, []string{""}},
	} {
		got, err := SplitParameters(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitParameters(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"open`, `'open`, `trailing\`} {
		if _, err := SplitParameters(bad); err == nil {
			t.Errorf("SplitParameters(%q) accepted", bad)
		}
	}
}

// FuzzSplitParameters: splitting never panics, and joining then splitting
// gives the arguments back.
func FuzzSplitParameters(f *testing.F) {
	for _, s := range []string{"", "-port 7777", `"a b" 'c d'`, `x\ y`, `'it'\''s'`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitParameters(s)
		if err != nil {
			return
		}
		again, err := SplitParameters(JoinParameters(args))
		if err != nil || !slices.Equal(args, again) {
			t.Fatalf("round trip of %q: %q -> %q (%v)", s, args, again, err)
		}
	})
}
