package api

import "github.com/anylift/anylift/internal/control"

func gameSessionOps(s *control.Service, m map[string]handler) {
}
