package store

import "github.com/anylift/anylift/internal/game"

// LocationTx reads and writes custom locations.
type LocationTx interface {
	// InsertLocation adds l; Conflict when the name is taken.
	InsertLocation(l *game.Location) error
	// GetLocation returns the named location; NotFound when absent.
	GetLocation(name string) (*game.Location, error)
	// ListLocations lists locations by name.
	ListLocations(p Page) (list []*game.Location, next string, err error)
	// DeleteLocation removes the named location; NotFound when absent.
	DeleteLocation(name string) error
}
