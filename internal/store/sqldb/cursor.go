package sqldb

import (
	"encoding/base64"
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
)

// encodeCursor turns a position into an opaque NextToken.
func encodeCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a NextToken made by encodeCursor into v. An empty
// token leaves v untouched. A token that is not ours is InvalidRequest.
func decodeCursor(token string, v any) error {
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

// limit returns the page size: l, or def when l is not positive, at most max.
func limit(l, def, max int) int {
	if l <= 0 {
		l = def
	}
	if max > 0 && l > max {
		l = max
	}
	return l
}
