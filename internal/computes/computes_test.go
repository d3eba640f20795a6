package computes

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/wire"
)

// TestDeleteFleetComputes pins what DeleteFleet has control call: every compute
// of the fleet goes, with its auth tokens; other fleets keep theirs.
func TestDeleteFleetComputes(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.UnixMilli(1767225600500).UTC()
	s := newService(st, func() time.Time { return now })
	err = st.Update(ctx, func(tx store.Tx) error {
		for _, id := range []string{"fleet-a", "fleet-b"} {
			f := &game.Fleet{ID: id, Status: game.FleetActive, ComputeType: wire.ComputeTypeAnywhere, Locations: []string{"custom-x"}}
			if err := tx.InsertFleet(f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, fleet := range []string{"fleet-a", "fleet-b"} {
		for i := 0; i < 150; i++ { // more than one page of the store's list
			name := "host-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			in := &wire.RegisterComputeInput{FleetId: wire.String(fleet), ComputeName: wire.String(name),
				Location: wire.String("custom-x"), IpAddress: wire.String("10.0.0.1")}
			if _, err := s.RegisterCompute(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		out, err := s.GetComputeAuthToken(ctx, &wire.GetComputeAuthTokenInput{FleetId: wire.String(fleet), ComputeName: wire.String("host-aa")})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, *out.AuthToken)
	}
	if err := st.Update(ctx, func(tx store.Tx) error { return s.DeleteFleetComputes(tx, "fleet-a") }); err != nil {
		t.Fatal(err)
	}
	err = st.View(ctx, func(tx store.Tx) error {
		for fleet, want := range map[string]int{"fleet-a": 0, "fleet-b": 150} {
			counts, err := tx.CountComputes(fleet)
			if err != nil {
				return err
			}
			if counts["custom-x"] != want {
				t.Errorf("%s has %d computes, want %d", fleet, counts["custom-x"], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckAuthToken(ctx, tokens[0], "fleet-a", "host-aa"); !game.IsKind(err, game.Unauthorized) {
		t.Errorf("token of a deleted fleet's compute: %v, want Unauthorized", err)
	}
	if err := s.CheckAuthToken(ctx, tokens[1], "fleet-b", "host-aa"); err != nil {
		t.Errorf("other fleet's token: %v", err)
	}
}

// TestRegisterComputeFleetState pins the refusals that depend on the
// fleet's record: a fleet that is not ACTIVE or not ANYWHERE takes no
// computes, and nothing is stored.
func TestRegisterComputeFleetState(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := newService(st, nil)
	fleets := map[string]*game.Fleet{
		"fleet-deleting": {ID: "fleet-deleting", Status: game.FleetDeleting, ComputeType: wire.ComputeTypeAnywhere, Locations: []string{"custom-x"}},
		"fleet-ec2":      {ID: "fleet-ec2", Status: game.FleetActive, ComputeType: "EC2", Locations: []string{"custom-x"}},
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		for _, f := range fleets {
			if err := tx.InsertFleet(f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id := range fleets {
		in := &wire.RegisterComputeInput{FleetId: wire.String(id), ComputeName: wire.String("h"),
			Location: wire.String("custom-x"), IpAddress: wire.String("10.0.0.1")}
		if _, err := s.RegisterCompute(ctx, in); !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("%s: %v, want InvalidRequest", id, err)
		}
		st.View(ctx, func(tx store.Tx) error {
			if _, err := tx.GetCompute(id, "h"); !game.IsKind(err, game.NotFound) {
				t.Errorf("%s: refused compute stored: %v", id, err)
			}
			return nil
		})
	}
}
