package api

import "github.com/anylift/anylift/internal/control"

func playerSessionOps(s *control.Service, m map[string]handler) {
	m["CreatePlayerSession"] = op(s.CreatePlayerSession)
	m["CreatePlayerSessions"] = op(s.CreatePlayerSessions)
	m["DescribePlayerSessions"] = op(s.DescribePlayerSessions)
}
