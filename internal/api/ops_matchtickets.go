package api

import "github.com/anylift/anylift/internal/flexmatch"

func matchmakerOps(s *flexmatch.Service, m map[string]handler) {
	m["CreateMatchmakingConfiguration"] = op(s.CreateMatchmakingConfiguration)
	m["DescribeMatchmakingConfigurations"] = op(s.DescribeMatchmakingConfigurations)
	m["UpdateMatchmakingConfiguration"] = op(s.UpdateMatchmakingConfiguration)
	m["DeleteMatchmakingConfiguration"] = op(s.DeleteMatchmakingConfiguration)
	m["StartMatchmaking"] = op(s.StartMatchmaking)
	m["DescribeMatchmaking"] = op(s.DescribeMatchmaking)
	m["StopMatchmaking"] = op(s.StopMatchmaking)
	m["AcceptMatch"] = op(s.AcceptMatch)
	m["StartMatchBackfill"] = op(s.StartMatchBackfill)
}
