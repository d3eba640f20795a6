package control

import (
	"context"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// CreateLocation creates a custom location; Conflict if the name is taken.
func (s *Service) CreateLocation(ctx context.Context, in *wire.CreateLocationInput) (*wire.CreateLocationOutput, error) {
	l := &game.Location{
		Name:         *in.LocationName,
		ARN:          s.cfg.Account.LocationARN(*in.LocationName),
		CreationTime: s.clock(),
	}
	err := s.update(ctx, func(tx store.Tx) error {
		if err := tx.InsertLocation(l); err != nil {
			return err
		}
		return tx.PutTags(l.ARN, wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateLocationOutput{Location: locationOut(l)}, nil
}

// ListLocations lists custom locations. With Filters [AWS] only, the list
// is empty: Anylift hosts no AWS Regions.
func (s *Service) ListLocations(ctx context.Context, in *wire.ListLocationsInput) (*wire.ListLocationsOutput, error) {
	out := &wire.ListLocationsOutput{Locations: []wire.LocationModel{}}
	if len(in.Filters) > 0 && !containsString(in.Filters, wire.LocationFilterCustom) {
		return out, nil
	}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListLocations(store.Page{Limit: int(wire.Deref(in.Limit)), Token: wire.Deref(in.NextToken)})
		for _, l := range list {
			out.Locations = append(out.Locations, *locationOut(l))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// DeleteLocation deletes a custom location. A location that a fleet still
// uses cannot be deleted.
func (s *Service) DeleteLocation(ctx context.Context, in *wire.DeleteLocationInput) (*wire.DeleteLocationOutput, error) {
	name := game.ResourceID(*in.LocationName, "location")
	err := s.update(ctx, func(tx store.Tx) error {
		l, err := tx.GetLocation(name)
		if err != nil {
			return err
		}
		fleets, err := tx.FleetsInLocation(name)
		if err != nil {
			return err
		}
		if len(fleets) > 0 {
			return game.Errorf(game.InvalidRequest, "location %s is used by fleets %s; delete them first", name, strings.Join(fleets, ", "))
		}
		if err := tx.DeleteLocation(name); err != nil {
			return err
		}
		return tx.DeleteAllTags(l.ARN)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeleteLocationOutput{}, nil
}

func locationOut(l *game.Location) *wire.LocationModel {
	return &wire.LocationModel{LocationName: wire.String(l.Name), LocationArn: wire.String(l.ARN)}
}

func containsString(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}
