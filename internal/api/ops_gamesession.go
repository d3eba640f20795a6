package api

import "github.com/anylift/anylift/internal/sessions"

func gameSessionOps(s *sessions.Service, m map[string]handler) {
	m["CreateGameSession"] = op(s.CreateGameSession)
	m["DescribeGameSessions"] = opIn(s.DescribeGameSessionsEncoded)
	m["DescribeGameSessionDetails"] = op(s.DescribeGameSessionDetails)
	m["UpdateGameSession"] = op(s.UpdateGameSession)
	m["TerminateGameSession"] = op(s.TerminateGameSession)
}
