package api

import "github.com/anylift/anylift/internal/sessions"

func playerSessionOps(s *sessions.Service, m map[string]handler) {
	m["CreatePlayerSession"] = op(s.CreatePlayerSession)
	m["CreatePlayerSessions"] = op(s.CreatePlayerSessions)
	m["DescribePlayerSessions"] = op(s.DescribePlayerSessions)
}
