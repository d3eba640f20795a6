package store

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"

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

// Token is EncodeToken(c), the same bytes, written without reflection.
func (c SessionCursor) Token() string {
	var buf [64]byte
	b := append(buf[:0], `{"c":`...)
	b = strconv.AppendInt(b, c.C, 10)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, c.PK, 10)
	return tokenOf(append(b, '}'))
}

// tokenOf is the base64 of a token's JSON.
func tokenOf(js []byte) string {
	var buf [192]byte
	out := buf[:0]
	if n := base64.RawURLEncoding.EncodedLen(len(js)); n > len(buf) {
		out = make([]byte, 0, n)
	}
	return string(base64.RawURLEncoding.AppendEncode(out, js))
}

// plainJSON reports whether encoding/json writes s between its quotes
// as it is: printable ASCII other than the quote, the backslash and the
// characters it escapes for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
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

// Token is EncodeToken(c), the same bytes, written without reflection
// when its strings need no escaping.
func (c SearchCursor) Token() string {
	if !plainJSON(c.Q) || c.S != nil && !plainJSON(*c.S) {
		return EncodeToken(c)
	}
	var buf [160]byte
	b := append(buf[:0], `{"q":"`...)
	b = append(b, c.Q...)
	b = append(b, '"')
	if c.S != nil {
		b = append(b, `,"s":"`...)
		b = append(b, *c.S...)
		b = append(b, '"')
	}
	if c.N != nil {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, *c.N, 10)
	}
	b = append(b, `,"c":`...)
	b = strconv.AppendInt(b, c.C, 10)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, c.P, 10)
	return tokenOf(append(b, '}'))
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
// the search that issued it: the first 8 bytes, in hex, of the SHA-256 of
// the fleet, location, filter and sort, each spelled as written and ended
// by a zero byte (the sort's not). Tokens carry it, so it never changes.
func (q SearchQuery) Fingerprint() string {
	var buf [256]byte
	b := append(buf[:0], q.FleetID...)
	b = append(b, 0)
	b = append(b, q.Location...)
	b = append(b, 0)
	if q.Filter != nil {
		b = search.AppendExpr(b, q.Filter)
	}
	b = append(b, 0)
	if q.Sort != nil {
		b = q.Sort.Append(b)
	}
	sum := sha256.Sum256(b)
	var out [16]byte
	hex.Encode(out[:], sum[:8])
	return string(out[:])
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
