package api

import "github.com/anylift/anylift/internal/flexmatch"

func matchmakingOps(s *flexmatch.Service, m map[string]handler) {
	m["ValidateMatchmakingRuleSet"] = op(s.ValidateMatchmakingRuleSet)
	m["CreateMatchmakingRuleSet"] = op(s.CreateMatchmakingRuleSet)
	m["DescribeMatchmakingRuleSets"] = op(s.DescribeMatchmakingRuleSets)
	m["DeleteMatchmakingRuleSet"] = op(s.DeleteMatchmakingRuleSet)
}
