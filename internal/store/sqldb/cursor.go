package sqldb

import "github.com/anylift/anylift/internal/store"

// encodeCursor turns a position into an opaque NextToken.
func encodeCursor(v any) string { return store.EncodeToken(v) }

// decodeCursor reads a NextToken made by encodeCursor into v. An empty
// token leaves v untouched. A token that is not ours is InvalidRequest.
func decodeCursor(token string, v any) error { return store.DecodeToken(token, v) }

// limit returns the page size: l, or def when l is not positive, at most max.
func limit(l, def, max int) int { return store.PageLimit(l, def, max) }
