package control

import "github.com/anylift/anylift/internal/store"

// Hooks between areas. Each is owned by the area named in its comment,
// which replaces the placeholder here with the real thing in its own file.

// endComputeSessions ends the live game sessions hosted on a compute that
// is deregistered (DESIGN.md decision 10). Owned by the sessions area.
func (s *Service) endComputeSessions(tx store.Tx, fleetID, computeName string) error { return nil }

// endFleetSessions ends the live game sessions of a fleet being deleted.
// Owned by the sessions area.
func (s *Service) endFleetSessions(tx store.Tx, fleetID string) error { return nil }

// activeProcesses counts a fleet's ACTIVE server processes per location.
// Owned by the server-process area; until it lands there are none.
func (s *Service) activeProcesses(tx store.Tx, fleetID string) (map[string]int, error) {
	return map[string]int{}, nil
}
