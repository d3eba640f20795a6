package sqldb

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Placeholders until the sessions area lands; replace this file.

func (t *Tx) UpdateGameSession(s *game.GameSession) error { return errTODO }
func (t *Tx) ListGameSessions(f store.SessionFilter, p store.Page) ([]*game.GameSession, string, error) {
	return nil, "", errTODO
}
func (t *Tx) CountCreatorSessions(fleetID, creatorID string, since time.Time) (int, error) {
	return 0, errTODO
}
func (t *Tx) FleetUsage(fleetID string) ([]store.LocationUsage, error)          { return nil, errTODO }
func (t *Tx) ReserveSeats(gameSessionID string, ps []*game.PlayerSession) error { return errTODO }
func (t *Tx) GetPlayerSession(id string) (*game.PlayerSession, error)           { return nil, errTODO }
func (t *Tx) ListPlayerSessions(f store.PlayerFilter, p store.Page) ([]*game.PlayerSession, string, error) {
	return nil, "", errTODO
}
func (t *Tx) SetPlayerSessionStatus(id, status string, at time.Time) (*game.PlayerSession, error) {
	return nil, errTODO
}
func (t *Tx) ExpireReservations(cutoff, at time.Time) (int, error)       { return 0, errTODO }
func (t *Tx) EndPlayerSessions(gameSessionID string, at time.Time) error { return errTODO }
