package game

import "time"

// MatchmakingRuleSet is a stored FlexMatch rule set. Rule sets are
// immutable: Body is kept byte for byte as submitted.
type MatchmakingRuleSet struct {
	Name         string
	ARN          string
	Body         string
	CreationTime time.Time
}

// MatchmakingRuleSetARN is the ARN of the rule set of that name.
func (a Account) MatchmakingRuleSetARN(name string) string {
	return a.arn("matchmakingruleset/" + name)
}

// MatchmakingConfigurationARN is the ARN of the configuration of that name.
func (a Account) MatchmakingConfigurationARN(name string) string {
	return a.arn("matchmakingconfiguration/" + name)
}
