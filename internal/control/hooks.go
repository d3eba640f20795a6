package control

import "github.com/anylift/anylift/internal/store"

// Hooks between areas. Each is owned by the area named in its comment,
// which replaces the placeholder here with the real thing in its own file.

// deleteFleetComputes deregisters every compute of a fleet being deleted.
// Owned by the computes area.
func (s *Service) deleteFleetComputes(tx store.Tx, fleetID string) error { return nil }

// endComputeSessions and endFleetSessions are in gamesessions.go.
