package store

import "github.com/anylift/anylift/internal/game"

// FleetTx reads and writes fleets.
type FleetTx interface {
	// InsertFleet adds f; Conflict when the id is taken.
	InsertFleet(f *game.Fleet) error
	// GetFleet returns the fleet; NotFound when absent (or deleted).
	GetFleet(id string) (*game.Fleet, error)
	// UpdateFleet overwrites the stored fleet f.ID; NotFound when absent.
	UpdateFleet(f *game.Fleet) error
	// DeleteFleet removes the fleet record; NotFound when absent.
	DeleteFleet(id string) error
	// ListFleets lists fleets in creation order.
	ListFleets(p Page) (list []*game.Fleet, next string, err error)
	// FleetsInLocation returns the ids of fleets that use the location.
	FleetsInLocation(location string) ([]string, error)
	// ListContainerFleets lists container fleets in creation order, those
	// that run the definition group when it is not empty (at version
	// when that is not 0).
	ListContainerFleets(group string, version int, p Page) (list []*game.Fleet, next string, err error)
	// FleetsUsingContainerGroup returns the fleets that run a version of
	// the definition name, by fleet id.
	FleetsUsingContainerGroup(name string) ([]FleetGroupUse, error)
}

// FleetGroupUse is a fleet running a version of a container group
// definition.
type FleetGroupUse struct {
	FleetID string
	Version int
}
