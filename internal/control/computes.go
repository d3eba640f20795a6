package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The seam between control and the computes of Anywhere fleets with their
// auth tokens (internal/computes: the compute operations, the check of a
// process's token, tokens minted, expired ones swept). That package reads
// and writes computes and tokens in the store; what it needs of the rest
// of the control plane, the game sessions hosted on a compute that goes
// ended, it asks of the server processes (computes.Control, which
// internal/processes implements). The server processes and the container
// fleets ask it directly for tokens and a compute's removal
// (processes.Computes, containers.Computes). What control needs of it, a
// deleted fleet's computes deregistered and the token timer, it asks
// through Computes.

// Computes is computes and their auth tokens as control sees them.
type Computes interface {
	// DeleteFleetComputes deregisters every compute of a fleet being
	// deleted, inside tx.
	DeleteFleetComputes(tx store.Tx, fleetID string) error
	// SweepAuthTokens deletes the expired auth tokens; a timer.
	SweepAuthTokens(ctx context.Context) error
}

// SetComputes makes a fleet's deletion and the token timer go through c. Call it
// before Run and before serving requests.
func (s *Service) SetComputes(c Computes) { s.computes = c }

func (s *Service) deleteFleetComputes(tx store.Tx, fleetID string) error {
	if s.computes == nil {
		return game.Errorf(game.Internal, "fleet %s: no compute service is set", fleetID)
	}
	return s.computes.DeleteFleetComputes(tx, fleetID)
}

func (s *Service) sweepAuthTokens(ctx context.Context) error {
	if s.computes == nil {
		return nil
	}
	return s.computes.SweepAuthTokens(ctx)
}
