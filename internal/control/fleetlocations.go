package control

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// defaultLocationPage is the page size of DescribeFleetLocationAttributes
// when no Limit is given.
const defaultLocationPage = 100

// DescribeFleetLocationAttributes gives the state of each of the fleet's
// locations (all ACTIVE), in the order they were added, optionally only
// those named in Locations, a page at a time. NotFound for an unknown fleet.
func (s *Service) DescribeFleetLocationAttributes(ctx context.Context, in *wire.DescribeFleetLocationAttributesInput) (*wire.DescribeFleetLocationAttributesOutput, error) {
	start, err := decodeIndexToken(wire.Deref(in.NextToken))
	if err != nil {
		return nil, err
	}
	var f *game.Fleet
	err = s.view(ctx, func(tx store.Tx) error {
		f, err = tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		return err
	})
	if err != nil {
		return nil, err
	}
	names := f.Locations
	if len(in.Locations) > 0 {
		names = nil
		for _, l := range f.Locations {
			if containsString(in.Locations, l) {
				names = append(names, l)
			}
		}
	}
	out := &wire.DescribeFleetLocationAttributesOutput{
		FleetId:            wire.String(f.ID),
		FleetArn:           wire.String(f.ARN),
		LocationAttributes: []wire.LocationAttributes{},
	}
	n := int(wire.Deref(in.Limit))
	if n <= 0 {
		n = defaultLocationPage
	}
	for i, st := range locationStates(names) {
		if i < start {
			continue
		}
		if len(out.LocationAttributes) == n {
			out.NextToken = wire.String(encodeIndexToken(i))
			break
		}
		out.LocationAttributes = append(out.LocationAttributes, wire.LocationAttributes{LocationState: &st,
			StoppedActions: stoppedActions(f, wire.Deref(st.Location))})
	}
	return out, nil
}

const indexTokenPrefix = "loc:"

// encodeIndexToken is an opaque NextToken for a position in a short list
// held in one record.
func encodeIndexToken(i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(indexTokenPrefix + strconv.Itoa(i)))
}

// decodeIndexToken reads a token of encodeIndexToken; empty is 0.
func decodeIndexToken(token string) (int, error) {
	if token == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil && strings.HasPrefix(string(b), indexTokenPrefix) {
		if i, err := strconv.Atoi(string(b[len(indexTokenPrefix):])); err == nil && i >= 0 {
			return i, nil
		}
	}
	return 0, game.Errorf(game.InvalidRequest, "NextToken is not a token this service issued")
}
