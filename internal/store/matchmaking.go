package store

import "github.com/anylift/anylift/internal/game"

// MatchmakingTx reads and writes matchmaking rule sets (keyed by name).
type MatchmakingTx interface {
	// InsertRuleSet adds rs; Conflict when the name is taken.
	InsertRuleSet(rs *game.MatchmakingRuleSet) error
	// GetRuleSet returns the rule set; NotFound when absent.
	GetRuleSet(name string) (*game.MatchmakingRuleSet, error)
	// DeleteRuleSet removes the rule set; NotFound when absent.
	DeleteRuleSet(name string) error
	// ListRuleSets lists rule sets in creation order, a page at a time.
	ListRuleSets(p Page) (list []*game.MatchmakingRuleSet, next string, err error)
	// CountRuleSets returns how many rule sets exist.
	CountRuleSets() (int, error)
}
