package api

import "github.com/anylift/anylift/internal/control"

func fleetOps(s *control.Service, m map[string]handler) {
}
