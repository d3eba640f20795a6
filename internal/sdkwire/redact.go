package sdkwire

import "strings"

// RedactToken replaces every whole appearance of an auth token in s by
// its first four characters and an ellipsis (a token shorter than eight
// characters goes entirely), so that logs and errors never hold it: the
// token rides in the WebSocket URL's query, which errors quote, and game
// servers often print their settings.
func RedactToken(s, token string) string {
	switch {
	case token == "":
		return s
	case len(token) < 8:
		return strings.ReplaceAll(s, token, "…")
	}
	return strings.ReplaceAll(s, token, token[:4]+"…")
}
