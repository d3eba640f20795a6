package store

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
)

// Pagination tokens are part of the contract: a NextToken issued by one
// reader of game sessions (the SQL store, or the live state in memory)
// must be accepted by the other, so that a caller paging through a
// fleet may be served by either between two pages. Both encode their
// positions with the types and functions below.

// EncodeToken turns a position into an opaque NextToken: base64 of its
// JSON.
func EncodeToken(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeToken reads a NextToken made by EncodeToken into v. An empty
// token leaves v untouched. A token that is not ours is InvalidRequest.
func DecodeToken(token string, v any) error {
	if token == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return game.Errorf(game.InvalidRequest, "NextToken is not a token this service issued")
	}
	return nil
}

// SessionCursor is the position after the last session of a
// ListGameSessions page: its creation time (epoch ms) and row key.
type SessionCursor struct {
	C  int64 `json:"c"`
	PK int64 `json:"p"`
}

// SearchCursor is the position after the last session of a
// SearchGameSessions page: its sort value (S for strings, N for numbers,
// neither when the session lacks the sorted property or there is no
// sort), creation time (epoch ms) and row key, with Q, the fingerprint of
// the query it belongs to.
type SearchCursor struct {
	Q string  `json:"q"`
	S *string `json:"s,omitempty"`
	N *int64  `json:"n,omitempty"`
	C int64   `json:"c"`
	P int64   `json:"p"`
}

// SearchAfter decodes the cursor of token for q (nil when token is
// empty), checking that it belongs to q, whose fingerprint is fp.
func SearchAfter(q SearchQuery, token, fp string) (*SearchCursor, error) {
	if token == "" {
		return nil, nil
	}
	after := &SearchCursor{}
	if err := DecodeToken(token, after); err != nil {
		return nil, err
	}
	if after.Q != fp {
		return nil, game.Errorf(game.InvalidRequest,
			"NextToken belongs to another search: the fleet, location, filter and sort must stay the same between pages")
	}
	if !after.Fits(q.Sort) {
		return nil, game.Errorf(game.InvalidRequest, "NextToken is not a token this service issued")
	}
	return after, nil
}

// Fits reports whether the cursor holds a sort value of the sort's type.
func (c *SearchCursor) Fits(s *search.Sort) bool {
	switch {
	case s == nil:
		return c.S == nil && c.N == nil
	case s.Operand.Field == search.Property:
		return c.N == nil
	case s.Operand.Field.Kind() == search.String:
		return c.S != nil && c.N == nil
	}
	return c.N != nil && c.S == nil
}

// Fingerprint identifies a search, so that a token is only accepted by
// the search that issued it.
func (q SearchQuery) Fingerprint() string {
	var b strings.Builder
	b.WriteString(q.FleetID + "\x00" + q.Location + "\x00")
	if q.Filter != nil {
		b.WriteString(q.Filter.String())
	}
	b.WriteString("\x00")
	if q.Sort != nil {
		b.WriteString(q.Sort.String())
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// PageLimit returns a page size: l, or def when l is not positive, at
// most max (no cap when max is 0).
func PageLimit(l, def, max int) int {
	if l <= 0 {
		l = def
	}
	if max > 0 && l > max {
		l = max
	}
	return l
}
