package sqldb

import (
	"errors"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Placeholders until the events area lands; replace this file.

var errTODO = errors.New("not implemented yet")

func (t *Tx) InsertEvent(e *game.Event) error { return errTODO }
func (t *Tx) ListEvents(fleetID string, start, end time.Time, p store.Page) ([]*game.Event, string, error) {
	return nil, "", errTODO
}
