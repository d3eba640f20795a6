package control

import "github.com/anylift/anylift/internal/store"

// tagCheckers maps a taggable resource type (the ARN's "<type>/" segment)
// to a lookup that answers NotFound when the resource is absent. Each area
// adds its resource type here.
func (s *Service) tagCheckers() map[string]func(tx store.Tx, id string) error {
	return map[string]func(tx store.Tx, id string) error{
		"fleet":                    func(tx store.Tx, id string) error { _, err := tx.GetFleet(id); return err },
		"alias":                    func(tx store.Tx, id string) error { _, err := tx.GetAlias(id); return err },
		"gamesessionqueue":         func(tx store.Tx, id string) error { _, err := tx.GetQueue(id); return err },
		"matchmakingruleset":       func(tx store.Tx, id string) error { _, err := tx.GetRuleSet(id); return err },
		"matchmakingconfiguration": func(tx store.Tx, id string) error { _, err := tx.GetMatchConfig(id); return err },
		"containergroupdefinition": func(tx store.Tx, id string) error { _, err := tx.GetContainerGroup(id, 0); return err },
	}
}
