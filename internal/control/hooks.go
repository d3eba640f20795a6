package control

import "github.com/anylift/anylift/internal/store"

// Hooks between areas. Each is owned by the area named in its comment,
// which replaces the placeholder here with the real thing in its own file.
// deleteFleetComputes is in computes.go, endFleetSessions in processes.go
// (the seams to internal/computes and internal/processes).

// activeProcesses counts a fleet's ACTIVE server processes per location.
func (s *Service) activeProcesses(tx store.Tx, fleetID string) (map[string]int, error) {
	return tx.CountActiveProcesses(fleetID)
}
