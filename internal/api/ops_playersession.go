package api

import "github.com/anylift/anylift/internal/control"

func playerSessionOps(s *control.Service, m map[string]handler) {
}
