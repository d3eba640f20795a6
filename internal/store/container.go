package store

import "github.com/anylift/anylift/internal/game"

// ContainerGroupTx reads and writes container group definitions: a name
// with its type, and the versions written under it, numbered from 1 and
// never reused.
type ContainerGroupTx interface {
	// InsertContainerGroup adds the definition d.Name with its first
	// version d (d.Version is set to 1); Conflict when the name is taken.
	InsertContainerGroup(d *game.ContainerGroupDefinition) error
	// AddContainerGroupVersion writes d as the next version of d.Name and
	// sets d.Version; NotFound when the name is absent.
	AddContainerGroupVersion(d *game.ContainerGroupDefinition) error
	// GetContainerGroup returns one version of a definition, the latest
	// when version is 0; NotFound when absent.
	GetContainerGroup(name string, version int) (*game.ContainerGroupDefinition, error)
	// ContainerGroupVersions returns the version numbers of a definition,
	// newest first; NotFound when the name is absent.
	ContainerGroupVersions(name string) ([]int, error)
	// DeleteContainerGroupVersion removes one version; the definition
	// goes with its last version (gone reports it). NotFound when absent.
	DeleteContainerGroupVersion(name string, version int) (gone bool, err error)
	// ListContainerGroups lists the latest version of each definition, by
	// name, filtered by type when groupType is not empty.
	ListContainerGroups(groupType string, p Page) (list []*game.ContainerGroupDefinition, next string, err error)
	// ListContainerGroupVersions lists a definition's versions, newest
	// first; NotFound when the name is absent.
	ListContainerGroupVersions(name string, p Page) (list []*game.ContainerGroupDefinition, next string, err error)
}
