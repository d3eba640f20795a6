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

func (e *ValidationError) err() error {
	if e.Count == 0 {
		return nil
	}
	return e
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

func (e *ValidationError) str(path, v string, min, max int, re *regexp.Regexp, enum []string, sensitive bool) {
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
	if re != nil && !re.MatchString(v) {
		e.add(quote(v, sensitive), path, "Member must satisfy regular expression pattern: "+strings.TrimSuffix(strings.TrimPrefix(re.String(), "^(?:"), ")$"))
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
