package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// EventTx reads and writes fleet events.
type EventTx interface {
	// InsertEvent records e (e.ID must be unique).
	InsertEvent(e *game.Event) error
	// ListEvents lists a fleet's events with start <= time <= end (zero
	// bounds are open), oldest first.
	ListEvents(fleetID string, start, end time.Time, p Page) (list []*game.Event, next string, err error)
}
