package flexmatch

import (
	"sync"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// Parsed rule sets, keyed by body. Rule sets are immutable and parsing is
// a pure function of the body, so this holds nothing the store does not;
// it only saves parsing the same body on every ticket and step. Parsed
// rule sets are read-only once built and shared between goroutines.
var parsedRules struct {
	sync.Mutex
	m map[string]*ruleset.RuleSet
}

const maxParsedRules = 256

// rulesOf returns the parsed rule set of body (InvalidRequest when it does
// not parse, which a stored body always does).
func rulesOf(body string) (*ruleset.RuleSet, error) {
	parsedRules.Lock()
	rs, ok := parsedRules.m[body]
	parsedRules.Unlock()
	if ok {
		return rs, nil
	}
	rs, err := parseRuleSet(body)
	if err != nil {
		return nil, err
	}
	parsedRules.Lock()
	defer parsedRules.Unlock()
	if parsedRules.m == nil || len(parsedRules.m) >= maxParsedRules {
		parsedRules.m = map[string]*ruleset.RuleSet{}
	}
	parsedRules.m[body] = rs
	return rs, nil
}
