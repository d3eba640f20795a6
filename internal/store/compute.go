package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// ComputeTx reads and writes computes and their auth tokens.
type ComputeTx interface {
	// InsertCompute adds c; Conflict when the fleet has a compute of that name.
	InsertCompute(c *game.Compute) error
	// GetCompute returns the compute; NotFound when absent.
	GetCompute(fleetID, name string) (*game.Compute, error)
	// UpdateCompute overwrites the stored compute; NotFound when absent.
	UpdateCompute(c *game.Compute) error
	// DeleteCompute removes the compute and its auth tokens; NotFound when absent.
	DeleteCompute(fleetID, name string) error
	// ListComputes lists a fleet's computes by name, keeping those that
	// match f.
	ListComputes(fleetID string, f ComputeFilter, p Page) (list []*game.Compute, next string, err error)
	// CountComputes returns the number of computes of a fleet per location.
	CountComputes(fleetID string) (map[string]int, error)
	// InsertAuthToken records a token by its hash (t.Secret is not stored).
	InsertAuthToken(t *game.AuthToken) error
	// GetAuthToken returns the token with this hash; NotFound when absent.
	GetAuthToken(hash string) (*game.AuthToken, error)
	// DeleteExpiredAuthTokens removes tokens that expire at or before t and
	// returns how many it removed.
	DeleteExpiredAuthTokens(t time.Time) (int, error)
}

// ComputeFilter narrows ListComputes; empty fields match every compute.
type ComputeFilter struct {
	Location string
	Status   string
}
