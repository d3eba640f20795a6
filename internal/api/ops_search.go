package api

import "github.com/anylift/anylift/internal/sessions"

func searchOps(s *sessions.Service, m map[string]handler) {
	m["SearchGameSessions"] = opIn(s.SearchGameSessionsEncoded)
}
