package store

import "github.com/anylift/anylift/internal/game"

// AliasTx reads and writes aliases.
type AliasTx interface {
	// InsertAlias adds a; Conflict when the id is taken.
	InsertAlias(a *game.Alias) error
	// GetAlias returns the alias; NotFound when absent.
	GetAlias(id string) (*game.Alias, error)
	// UpdateAlias overwrites the stored alias a.ID; NotFound when absent.
	UpdateAlias(a *game.Alias) error
	// DeleteAlias removes the alias; NotFound when absent.
	DeleteAlias(id string) error
	// ListAliases lists aliases in creation order, filtered by routing type
	// and exact name when those are not empty.
	ListAliases(routingType, name string, p Page) (list []*game.Alias, next string, err error)
}
