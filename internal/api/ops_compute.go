package api

import "github.com/anylift/anylift/internal/control"

func computeOps(s *control.Service, m map[string]handler) {
}
