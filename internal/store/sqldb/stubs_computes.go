package sqldb

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Placeholders until the computes area lands; replace this file.

func (t *Tx) InsertCompute(c *game.Compute) error                    { return errTODO }
func (t *Tx) GetCompute(fleetID, name string) (*game.Compute, error) { return nil, errTODO }
func (t *Tx) UpdateCompute(c *game.Compute) error                    { return errTODO }
func (t *Tx) DeleteCompute(fleetID, name string) error               { return errTODO }
func (t *Tx) ListComputes(fleetID, location string, p store.Page) ([]*game.Compute, string, error) {
	return nil, "", errTODO
}
func (t *Tx) CountComputes(fleetID string) (map[string]int, error) { return nil, errTODO }
func (t *Tx) InsertAuthToken(a *game.AuthToken) error              { return errTODO }
func (t *Tx) GetAuthToken(hash string) (*game.AuthToken, error)    { return nil, errTODO }
func (t *Tx) DeleteExpiredAuthTokens(at time.Time) (int, error)    { return 0, errTODO }
