package store

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/anylift/anylift/internal/search"
)

// Tokens already issued must stay valid: the fingerprint and the
// cursors' encodings are compared here with the way they were first
// made (strings concatenated and hashed; encoding/json).

func fingerprintBefore(q SearchQuery) string {
	s := q.FleetID + "\x00" + q.Location + "\x00"
	if q.Filter != nil {
		s += q.Filter.String()
	}
	s += "\x00"
	if q.Sort != nil {
		s += q.Sort.String()
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func FuzzTokensUnchanged(f *testing.F) {
	f.Add("fleet-1", "", "hasAvailablePlayerSessions = true", "creationTimeMillis DESC", "map-7", int64(5), int64(1700000000000), int64(42), uint8(3))
	f.Add("fleet-\x00x", "custom-a", "gameSessionProperties.k = '<&>\"é'", "gameSessionName ASC", "a\"b\\<c>&\u2028\xff", int64(-1), int64(0), int64(-9), uint8(1))
	f.Fuzz(func(t *testing.T, fleet, loc, filter, sort, str string, num, created, pk int64, which uint8) {
		q := SearchQuery{FleetID: fleet, Location: loc}
		if e, err := search.ParseFilter(filter); err == nil {
			q.Filter = e
		}
		if s, err := search.ParseSort(sort); err == nil {
			q.Sort = &s
		}
		if got, want := q.Fingerprint(), fingerprintBefore(q); got != want {
			t.Fatalf("fingerprint %s, was %s", got, want)
		}
		c := SearchCursor{Q: q.Fingerprint(), C: created, P: pk}
		if which&1 != 0 {
			c.S = &str
		}
		if which&2 != 0 {
			c.N = &num
		}
		if which&4 != 0 {
			c.Q = str
		}
		if got, want := c.Token(), EncodeToken(c); got != want {
			t.Fatalf("search token %s, was %s", got, want)
		}
		sc := SessionCursor{C: created, PK: pk}
		if got, want := sc.Token(), EncodeToken(sc); got != want {
			t.Fatalf("session token %s, was %s", got, want)
		}
	})
}
