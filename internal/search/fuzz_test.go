package search

import (
	"reflect"
	"testing"
)

var filterSeeds = []string{
	`maximumSessions>=10 AND hasAvailablePlayerSessions=true`,
	`gameSessionName = 'Matt\'s Awesome Game 1'`,
	`NOT (gameSessionProperties.mode = "ffa" OR playerSessionCount < 2) and creationTimeMillis > -1`,
	`((gameSessionId <> 'x'))`,
	`(a`, `)`, `'`, `"\`, `maximumSessions = 1.`,
}

// FuzzParseFilter checks that ParseFilter never panics and that what it
// accepts prints as an expression that parses to the same tree.
func FuzzParseFilter(f *testing.F) {
	for _, s := range filterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseFilter(src)
		if err != nil {
			return
		}
		again, err := ParseFilter(e.String())
		if err != nil {
			t.Fatalf("%q parsed, but its form %q did not: %v", src, e.String(), err)
		}
		if !reflect.DeepEqual(e, again) {
			t.Fatalf("%q: round trip changed the tree: %s vs %s", src, e, again)
		}
	})
}

// FuzzParseSort is FuzzParseFilter for sort expressions.
func FuzzParseSort(f *testing.F) {
	for _, s := range []string{`creationTimeMillis ASC`, `gameSessionProperties.x desc`, `a`, `playerSessionCount DESC x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := ParseSort(src)
		if err != nil {
			return
		}
		again, err := ParseSort(s.String())
		if err != nil || again != s {
			t.Fatalf("%q parsed as %v, but its form %q gave %v, %v", src, s, s.String(), again, err)
		}
	})
}
