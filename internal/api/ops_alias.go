package api

import "github.com/anylift/anylift/internal/control"

func aliasOps(s *control.Service, m map[string]handler) {
}
