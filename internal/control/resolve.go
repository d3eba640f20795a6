package control

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// fleetFor returns the fleet an operation targets, given a fleet id or ARN
// or an alias id or ARN: exactly one of them.
// A TERMINAL alias answers TerminalRoutingStrategy with its message.
func (s *Service) fleetFor(tx store.Tx, fleetIDOrARN, aliasIDOrARN string) (*game.Fleet, error) {
	switch {
	case fleetIDOrARN != "" && aliasIDOrARN != "":
		return nil, game.Errorf(game.InvalidRequest, "Each request must reference either a fleet ID or alias ID, but not both")
	case fleetIDOrARN == "" && aliasIDOrARN == "":
		return nil, game.Errorf(game.InvalidRequest, "Each request must reference either a fleet ID or alias ID")
	case aliasIDOrARN != "":
		id, err := s.resolveAlias(tx, aliasIDOrARN)
		if err != nil {
			return nil, err
		}
		return tx.GetFleet(id)
	}
	return tx.GetFleet(game.ResourceID(fleetIDOrARN, "fleet"))
}

// resolveAlias returns the fleet id a SIMPLE alias points to.
func (s *Service) resolveAlias(tx store.Tx, aliasIDOrARN string) (string, error) {
	a, err := tx.GetAlias(game.ResourceID(aliasIDOrARN, "alias"))
	if err != nil {
		return "", err
	}
	if a.RoutingType == game.RoutingTerminal {
		return "", &game.Error{Kind: game.TerminalRoutingStrategy, Message: a.Message}
	}
	return a.FleetID, nil
}
