package events

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/anylift/anylift/internal/game"
)

// Limits on a stream request's filters.
const (
	maxFilterValues = 50
	maxTypeLen      = 64
	maxResourceLen  = 1024
)

// streamQuery is a parsed GET /events request.
type streamQuery struct {
	// after is the last Seq the consumer has seen; replay starts after it.
	// Without one (hasAfter false) the stream starts at the current end.
	after     int64
	hasAfter  bool
	types     map[string]bool // empty: every type
	resources map[string]bool // empty: every resource
}

// parseQuery reads the resume point from the Last-Event-ID header
// (lastEventID, preferred: EventSource sends it on reconnect) or the
// "after" parameter, and the "type" and "resource" filters (repeated or
// comma-separated). Unknown parameters are refused so typos do not
// silently widen a stream.
func parseQuery(lastEventID string, q url.Values) (streamQuery, error) {
	var sq streamQuery
	for k := range q {
		switch k {
		case "after", "type", "resource":
		default:
			return sq, fmt.Errorf("unknown parameter %s: use after, type or resource", clip(k))
		}
	}
	resume := lastEventID
	if resume == "" && len(q["after"]) > 0 {
		if len(q["after"]) > 1 {
			return sq, fmt.Errorf("after may be given once")
		}
		resume = q["after"][0]
	}
	if resume != "" {
		seq, err := parseSeq(resume)
		if err != nil {
			return sq, err
		}
		sq.after, sq.hasAfter = seq, true
	}
	var err error
	if sq.types, err = values(q["type"], "type", maxTypeLen, isTypeName); err != nil {
		return sq, err
	}
	sq.resources, err = values(q["resource"], "resource", maxResourceLen, isPrintable)
	return sq, err
}

// parseSeq parses an event id: a decimal Seq, 0 or more.
func parseSeq(s string) (int64, error) {
	if len(s) > 19 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("event id %s must be a decimal number of at most 19 digits", clip(s))
	}
	seq, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("event id %s is out of range", clip(s))
	}
	return seq, nil
}

// values splits repeated, comma-separated filter values and checks each.
func values(raw []string, name string, maxLen int, ok func(string) bool) (map[string]bool, error) {
	out := map[string]bool{}
	count := 0
	for _, r := range raw {
		for _, v := range strings.Split(r, ",") {
			if count++; count > maxFilterValues {
				return nil, fmt.Errorf("at most %d %s values", maxFilterValues, name)
			}
			if v == "" || len(v) > maxLen || !ok(v) {
				return nil, fmt.Errorf("%s %s is not valid: want 1 to %d characters", name, clip(v), maxLen)
			}
			out[v] = true
		}
	}
	return out, nil
}

// match reports whether n passes the filters.
func (q streamQuery) match(n *game.Notification) bool {
	return (len(q.types) == 0 || q.types[n.Type]) && (len(q.resources) == 0 || q.resources[n.Resource])
}

func isTypeName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isPrintable(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// clip quotes, shortened, what a message echoes back.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
