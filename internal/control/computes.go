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
// internal/processes implements). What control needs of it, it asks
// through Computes.

// Computes is computes and their auth tokens as control sees them.
type Computes interface {
	// Deregister ends a compute's game sessions and deletes it with its
	// auth tokens inside tx: NotFound when it is not there.
	Deregister(tx store.Tx, fleetID, name string) error
	// DeleteFleetComputes deregisters every compute of a fleet being
	// deleted, inside tx.
	DeleteFleetComputes(tx store.Tx, fleetID string) error
	// MintAuthToken mints and stores an auth token for a registered
	// compute; the result carries the secret.
	MintAuthToken(ctx context.Context, fleetID, name string) (*game.AuthToken, error)
	// NewToken mints a token without storing it: the secret and the hash
	// it is stored and looked up by.
	NewToken() (secret, hash string)
	// SweepAuthTokens deletes the expired auth tokens; a timer.
	SweepAuthTokens(ctx context.Context) error
}

// SetComputes makes a fleet's deletion, a compute's removal, a
// RefreshConnection's token and the token timer go through c. Call it
// before Run and before serving requests.
func (s *Service) SetComputes(c Computes) { s.computes = c }

func (s *Service) deregister(tx store.Tx, fleetID, name string) error {
	if s.computes == nil {
		return game.Errorf(game.Internal, "compute %s: no compute service is set", name)
	}
	return s.computes.Deregister(tx, fleetID, name)
}

func (s *Service) deleteFleetComputes(tx store.Tx, fleetID string) error {
	if s.computes == nil {
		return game.Errorf(game.Internal, "fleet %s: no compute service is set", fleetID)
	}
	return s.computes.DeleteFleetComputes(tx, fleetID)
}

func (s *Service) mintAuthToken(ctx context.Context, fleetID, name string) (*game.AuthToken, error) {
	if s.computes == nil {
		return nil, game.Errorf(game.Internal, "compute %s: no compute service is set", name)
	}
	return s.computes.MintAuthToken(ctx, fleetID, name)
}

func (s *Service) sweepAuthTokens(ctx context.Context) error {
	if s.computes == nil {
		return nil
	}
	return s.computes.SweepAuthTokens(ctx)
}
