package api

import "github.com/anylift/anylift/internal/control"

func searchOps(s *control.Service, m map[string]handler) {
	m["SearchGameSessions"] = opIn(s.SearchGameSessionsEncoded)
}
