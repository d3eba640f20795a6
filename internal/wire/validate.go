package wire

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValidationError collects the model-constraint violations of one request,
// worded as the service words them:
//
//	1 validation error detected: Value 'x' at 'fleetId' failed to satisfy
//	constraint: Member must satisfy regular expression pattern: ...
//
// It counts every violation but lists the first MaxListedProblems only,
// so that a request of many bad values cannot make a huge answer.
type ValidationError struct {
	Problems []string // the first MaxListedProblems
	Count    int      // all of them
}

// MaxListedProblems is how many violations a message lists.
const MaxListedProblems = 10

func (e *ValidationError) Error() string {
	n := e.Count
	noun := "error"
	if n != 1 {
		noun = "errors"
	}
	msg := fmt.Sprintf("%d validation %s detected: %s", n, noun, strings.Join(e.Problems, "; "))
	if more := n - len(e.Problems); more > 0 {
		msg += fmt.Sprintf("; and %d more not listed", more)
	}
	return msg
}

// err is nil when e holds no violation, else a copy of e: the one
// checked stays on the caller's stack.
func (e *ValidationError) err() error {
	if e.Count == 0 {
		return nil
	}
	c := *e
	return &c
}

// listing reports whether a new violation will be listed; add counts it
// either way, and formats it only when it is.
func (e *ValidationError) listing() bool { return len(e.Problems) < MaxListedProblems }

func (e *ValidationError) add(value, path, constraint string) {
	e.Count++
	if e.listing() {
		e.Problems = append(e.Problems, fmt.Sprintf("Value %s at '%s' failed to satisfy constraint: %s", value, path, constraint))
	}
}

func (e *ValidationError) required(path string) {
	e.add("null", path, "Member must not be null")
}

// quote renders a value for a message: quoted, shortened, never a secret.
func quote(v string, sensitive bool) string {
	if sensitive {
		return "'***'"
	}
	const maxEcho = 64
	if utf8.RuneCountInString(v) > maxEcho {
		r := []rune(v)
		v = string(r[:maxEcho]) + "..."
	}
	return "'" + v + "'"
}

// pattern is a model pattern: its regexp, and for a few patterns every
// read checks, a function matching the same strings without it.
type pattern struct {
	re    *regexp.Regexp
	match func(string) bool
}

func (p *pattern) matches(v string) bool {
	if p.match != nil {
		return p.match(v)
	}
	return p.re.MatchString(v)
}

// matchFleetIDOrARN is ^[a-z]*fleet-[a-zA-Z0-9\-]+$ or
// ^arn:.*:[a-z]*fleet\/[a-z]*fleet-[a-zA-Z0-9\-]+$.
func matchFleetIDOrARN(v string) bool {
	if isFleetID(v) {
		return true
	}
	rest, ok := strings.CutPrefix(v, "arn:")
	if !ok {
		return false
	}
	// What follows the last colon holds no colon, so that colon ends .*,
	// which must be at least empty and holds no line feed.
	i := strings.LastIndexByte(rest, ':')
	if i < 0 || strings.IndexByte(rest[:i], '\n') >= 0 {
		return false
	}
	kind, id, ok := strings.Cut(rest[i+1:], "/")
	return ok && isLowerFleet(kind) && isFleetID(id)
}

// isFleetID is [a-z]*fleet-[a-zA-Z0-9\-]+, the whole of v: the run of
// lowercase letters at its start ends in "fleet", a hyphen follows (it
// ends the run), then one or more of the class.
func isFleetID(v string) bool {
	k := 0
	for k < len(v) && v[k] >= 'a' && v[k] <= 'z' {
		k++
	}
	if !isLowerFleet(v[:k]) || k+1 >= len(v) || v[k] != '-' {
		return false
	}
	return allIn(v[k+1:], alnumHyphen)
}

// isLowerFleet is [a-z]*fleet, the whole of v.
func isLowerFleet(v string) bool {
	if !strings.HasSuffix(v, "fleet") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 'a' || v[i] > 'z' {
			return false
		}
	}
	return true
}

// matchGameSessionID is ^[a-zA-Z0-9:/-]+$.
func matchGameSessionID(v string) bool { return v != "" && allIn(v, alnumColonSlashHyphen) }

// matchAlnumHyphen is ^[A-Za-z0-9\-]+$ (and the model's other spellings
// of it).
func matchAlnumHyphen(v string) bool { return v != "" && allIn(v, alnumHyphen) }

// Byte classes: which ASCII bytes are in them.
var (
	alnumHyphen           = byteClass("-")
	alnumColonSlashHyphen = byteClass(":/-")
)

func byteClass(extra string) *[256]bool {
	var c [256]bool
	for b := '0'; b <= '9'; b++ {
		c[b] = true
	}
	for b := 'a'; b <= 'z'; b++ {
		c[b], c[b-'a'+'A'] = true, true
	}
	for i := 0; i < len(extra); i++ {
		c[extra[i]] = true
	}
	return &c
}

func allIn(v string, class *[256]bool) bool {
	for i := 0; i < len(v); i++ {
		if !class[v[i]] {
			return false
		}
	}
	return true
}

func (e *ValidationError) str(path, v string, min, max int, re *pattern, enum []string, sensitive bool) {
	n := utf8.RuneCountInString(v)
	if !utf8.ValidString(v) {
		e.add("(invalid UTF-8)", path, "Member must be valid UTF-8")
		return
	}
	if min >= 0 && n < min {
		e.add(quote(v, sensitive), path, fmt.Sprintf("Member must have length greater than or equal to %d", min))
	}
	if max >= 0 && n > max {
		e.add(quote(v, sensitive), path, fmt.Sprintf("Member must have length less than or equal to %d", max))
	}
	if re != nil && !re.matches(v) {
		e.add(quote(v, sensitive), path, "Member must satisfy regular expression pattern: "+strings.TrimSuffix(strings.TrimPrefix(re.re.String(), "^(?:"), ")$"))
	}
	if enum != nil && !contains(enum, v) {
		e.add(quote(v, sensitive), path, "Member must satisfy enum value set: ["+strings.Join(enum, ", ")+"]")
	}
}

func (e *ValidationError) num(path string, v float64, hasMin bool, min float64, hasMax bool, max float64) {
	if hasMin && v < min {
		e.add("'"+strconv.FormatFloat(v, 'f', -1, 64)+"'", path, "Member must have value greater than or equal to "+strconv.FormatFloat(min, 'f', -1, 64))
	}
	if hasMax && v > max {
		e.add("'"+strconv.FormatFloat(v, 'f', -1, 64)+"'", path, "Member must have value less than or equal to "+strconv.FormatFloat(max, 'f', -1, 64))
	}
}

func (e *ValidationError) count(path string, n, min, max int) {
	if min >= 0 && n < min {
		e.add("of length "+itoa(n), path, fmt.Sprintf("Member must have length greater than or equal to %d", min))
	}
	if max >= 0 && n > max {
		e.add("of length "+itoa(n), path, fmt.Sprintf("Member must have length less than or equal to %d", max))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
