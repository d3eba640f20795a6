package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// CreateAlias creates an alias. A SIMPLE routing strategy needs the id of
// an existing fleet (InvalidRequest without one, NotFound for an unknown
// one) and drops any Message; a TERMINAL one drops any FleetId, as GameLift
// does.
func (s *Service) CreateAlias(ctx context.Context, in *wire.CreateAliasInput) (*wire.CreateAliasOutput, error) {
	now := s.clock()
	id := game.NewAliasID()
	a := &game.Alias{
		ID:              id,
		ARN:             s.cfg.Account.AliasARN(id),
		Name:            *in.Name,
		Description:     wire.Deref(in.Description),
		CreationTime:    now,
		LastUpdatedTime: now,
	}
	if err := setRouting(a, in.RoutingStrategy); err != nil {
		return nil, err
	}
	err := s.update(ctx, func(tx store.Tx) error {
		if err := checkRoutingFleet(tx, a); err != nil {
			return err
		}
		if err := tx.InsertAlias(a); err != nil {
			return err
		}
		return tx.PutTags(a.ARN, wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateAliasOutput{Alias: aliasOut(a)}, nil
}

// setRouting sets a's routing strategy from rs, checking what the model
// cannot: SIMPLE needs a FleetId.
func setRouting(a *game.Alias, rs *wire.RoutingStrategy) error {
	if rs == nil {
		return game.Errorf(game.InvalidRequest, "RoutingStrategy is required")
	}
	switch wire.Deref(rs.Type) {
	case game.RoutingSimple:
		if rs.FleetId == nil {
			return game.Errorf(game.InvalidRequest, "RoutingStrategy.FleetId is required when RoutingStrategy.Type is SIMPLE")
		}
		a.RoutingType, a.FleetID, a.Message = game.RoutingSimple, *rs.FleetId, ""
	case game.RoutingTerminal:
		a.RoutingType, a.FleetID, a.Message = game.RoutingTerminal, "", wire.Deref(rs.Message)
	default:
		return game.Errorf(game.InvalidRequest, "RoutingStrategy.Type is required: SIMPLE or TERMINAL")
	}
	return nil
}

// checkRoutingFleet answers NotFound when a SIMPLE alias names a fleet that
// does not exist.
func checkRoutingFleet(tx store.Tx, a *game.Alias) error {
	if a.RoutingType != game.RoutingSimple {
		return nil
	}
	_, err := tx.GetFleet(a.FleetID)
	if game.IsKind(err, game.NotFound) {
		return game.Errorf(game.NotFound, "RoutingStrategy.FleetId: fleet %s not found", a.FleetID)
	}
	return err
}

// DescribeAlias returns the alias (id or ARN); NotFound when absent.
func (s *Service) DescribeAlias(ctx context.Context, in *wire.DescribeAliasInput) (*wire.DescribeAliasOutput, error) {
	var out *wire.DescribeAliasOutput
	err := s.view(ctx, func(tx store.Tx) error {
		a, err := tx.GetAlias(game.ResourceID(*in.AliasId, "alias"))
		if err != nil {
			return err
		}
		out = &wire.DescribeAliasOutput{Alias: aliasOut(a)}
		return nil
	})
	return out, err
}

// ListAliases lists aliases, filtered by routing type and exact name when
// given, a page at a time.
func (s *Service) ListAliases(ctx context.Context, in *wire.ListAliasesInput) (*wire.ListAliasesOutput, error) {
	out := &wire.ListAliasesOutput{Aliases: []wire.Alias{}}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListAliases(wire.Deref(in.RoutingStrategyType), wire.Deref(in.Name), store.RequestPage(in.Limit, in.NextToken))
		for _, a := range list {
			out.Aliases = append(out.Aliases, *aliasOut(a))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// UpdateAlias changes the members given; a new routing strategy replaces
// the old one whole, under the rules of CreateAlias.
func (s *Service) UpdateAlias(ctx context.Context, in *wire.UpdateAliasInput) (*wire.UpdateAliasOutput, error) {
	var a *game.Alias
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if a, err = tx.GetAlias(game.ResourceID(*in.AliasId, "alias")); err != nil {
			return err
		}
		if in.Name != nil {
			a.Name = *in.Name
		}
		if in.Description != nil {
			a.Description = *in.Description
		}
		if in.RoutingStrategy != nil {
			if err := setRouting(a, in.RoutingStrategy); err != nil {
				return err
			}
			if err := checkRoutingFleet(tx, a); err != nil {
				return err
			}
		}
		a.LastUpdatedTime = s.clock()
		return tx.UpdateAlias(a)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateAliasOutput{Alias: aliasOut(a)}, nil
}

// DeleteAlias removes the alias and its tags; later use answers NotFound.
// The operation has no output members.
func (s *Service) DeleteAlias(ctx context.Context, in *wire.DeleteAliasInput) (*struct{}, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		a, err := tx.GetAlias(game.ResourceID(*in.AliasId, "alias"))
		if err != nil {
			return err
		}
		if err := tx.DeleteAlias(a.ID); err != nil {
			return err
		}
		return tx.DeleteAllTags(a.ARN)
	})
	if err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

// ResolveAlias returns the fleet a SIMPLE alias points to. A TERMINAL alias
// answers TerminalRoutingStrategy with the alias's message.
func (s *Service) ResolveAlias(ctx context.Context, in *wire.ResolveAliasInput) (*wire.ResolveAliasOutput, error) {
	var fleetID string
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		fleetID, err = s.resolveAlias(tx, *in.AliasId)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wire.ResolveAliasOutput{FleetId: wire.String(fleetID), FleetArn: wire.String(s.cfg.Account.FleetARN(fleetID))}, nil
}

func aliasOut(a *game.Alias) *wire.Alias {
	rs := &wire.RoutingStrategy{Type: wire.String(a.RoutingType)}
	if a.RoutingType == game.RoutingSimple {
		rs.FleetId = wire.String(a.FleetID)
	} else {
		rs.Message = wire.String(a.Message)
	}
	return &wire.Alias{
		AliasId:         wire.String(a.ID),
		Name:            wire.String(a.Name),
		AliasArn:        wire.String(a.ARN),
		Description:     wire.String(a.Description),
		RoutingStrategy: rs,
		CreationTime:    wire.NewTime(a.CreationTime),
		LastUpdatedTime: wire.NewTime(a.LastUpdatedTime),
	}
}
