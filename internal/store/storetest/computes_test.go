package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func testCompute(fleetID, name, location string, created time.Time) *game.Compute {
	return &game.Compute{
		FleetID: fleetID, Name: name, ARN: "arn:compute/" + name, Location: location,
		IPAddress: "10.0.0.1", DNSName: "host.example", CertificatePath: "/cert.pem",
		Status: game.ComputeActive, CreationTime: created, InstanceID: "instance-1",
		Ports: []game.PortMapping{{Container: "game", ContainerPort: 7777, ConnectionPort: 4192, Protocol: "UDP"}},
	}
}

func TestComputes(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := time.UnixMilli(1767225600500).UTC()
		Update(t, st, func(tx store.Tx) error {
			for _, c := range []*game.Compute{
				testCompute("fleet-1", "c", "custom-a", now),
				testCompute("fleet-1", "a", "custom-a", now),
				testCompute("fleet-1", "b/x", "custom-b", now),
				testCompute("fleet-2", "a", "custom-a", now),
			} {
				if err := tx.InsertCompute(c); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertCompute(testCompute("fleet-1", "a", "custom-b", now))
		})
		if !game.IsKind(err, game.Conflict) {
			t.Fatalf("duplicate insert: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			c, err := tx.GetCompute("fleet-1", "a")
			if err != nil {
				return err
			}
			want := testCompute("fleet-1", "a", "custom-a", now)
			if !reflect.DeepEqual(c, want) {
				t.Errorf("GetCompute = %+v, want %+v", c, want)
			}
			if _, err := tx.GetCompute("fleet-3", "a"); !game.IsKind(err, game.NotFound) {
				t.Errorf("absent compute: %v, want NotFound", err)
			}
			counts, err := tx.CountComputes("fleet-1")
			if err != nil || counts["custom-a"] != 2 || counts["custom-b"] != 1 || len(counts) != 2 {
				t.Errorf("CountComputes = %v, %v", counts, err)
			}
			return nil
		})
		c := testCompute("fleet-1", "c", "custom-a", now)
		c.Status = game.ComputeImpaired
		Update(t, st, func(tx store.Tx) error { return tx.UpdateCompute(c) })
		err = st.Update(t.Context(), func(tx store.Tx) error {
			return tx.UpdateCompute(testCompute("fleet-9", "c", "custom-a", now))
		})
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("update of absent compute: %v, want NotFound", err)
		}
	})
}

func TestListComputes(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := time.UnixMilli(1767225600500).UTC()
		Update(t, st, func(tx store.Tx) error {
			for _, name := range []string{"e", "d", "c", "b", "a"} {
				loc := "custom-a"
				if name == "b" || name == "d" {
					loc = "custom-b"
				}
				c := testCompute("fleet-1", name, loc, now)
				if name == "e" {
					c.Status = game.ComputeImpaired
				}
				if err := tx.InsertCompute(c); err != nil {
					return err
				}
			}
			return tx.InsertCompute(testCompute("fleet-2", "z", "custom-a", now))
		})
		cases := []struct {
			filter store.ComputeFilter
			want   []string
		}{
			{store.ComputeFilter{}, []string{"a", "b", "c", "d", "e"}},
			{store.ComputeFilter{Location: "custom-a"}, []string{"a", "c", "e"}},
			{store.ComputeFilter{Status: game.ComputeActive}, []string{"a", "b", "c", "d"}},
			{store.ComputeFilter{Location: "custom-a", Status: game.ComputeImpaired}, []string{"e"}},
			{store.ComputeFilter{Location: "custom-none"}, nil},
		}
		View(t, st, func(tx store.Tx) error {
			for _, tc := range cases {
				got := listAllComputes(t, tx, "fleet-1", tc.filter)
				if !equalStrings(got, tc.want) {
					t.Errorf("ListComputes %+v = %v, want %v", tc.filter, got, tc.want)
				}
			}
			if _, _, err := tx.ListComputes("fleet-1", store.ComputeFilter{}, store.Page{Token: "!!"}); !game.IsKind(err, game.InvalidRequest) {
				t.Errorf("bad token: %v", err)
			}
			return nil
		})
	})
}

// listAllComputes pages through ListComputes two at a time.
func listAllComputes(t *testing.T, tx store.Tx, fleetID string, f store.ComputeFilter) []string {
	t.Helper()
	var names []string
	token := ""
	for {
		page, next, err := tx.ListComputes(fleetID, f, store.Page{Limit: 2, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d, limit 2", len(page))
		}
		for _, c := range page {
			names = append(names, c.Name)
		}
		if next == "" {
			return names
		}
		token = next
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAuthTokens(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		now := time.UnixMilli(1767225600500).UTC()
		Update(t, st, func(tx store.Tx) error {
			if err := tx.InsertCompute(testCompute("fleet-1", "a", "custom-a", now)); err != nil {
				return err
			}
			if err := tx.InsertCompute(testCompute("fleet-1", "b", "custom-a", now)); err != nil {
				return err
			}
			for _, tok := range []*game.AuthToken{
				{Hash: "h-old", FleetID: "fleet-1", ComputeName: "a", Created: now, Expires: now.Add(time.Minute)},
				{Hash: "h-new", FleetID: "fleet-1", ComputeName: "a", Created: now, Expires: now.Add(time.Hour)},
				{Hash: "h-b", FleetID: "fleet-1", ComputeName: "b", Created: now, Expires: now.Add(time.Hour)},
			} {
				if err := tx.InsertAuthToken(tok); err != nil {
					return err
				}
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetAuthToken("h-new")
			if err != nil {
				return err
			}
			want := game.AuthToken{Hash: "h-new", FleetID: "fleet-1", ComputeName: "a", Created: now, Expires: now.Add(time.Hour)}
			if *got != want {
				t.Errorf("GetAuthToken = %+v, want %+v", got, want)
			}
			if _, err := tx.GetAuthToken("h-none"); !game.IsKind(err, game.NotFound) {
				t.Errorf("absent token: %v, want NotFound", err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			if n, err := tx.DeleteExpiredAuthTokens(now.Add(time.Minute - time.Millisecond)); err != nil || n != 0 {
				t.Errorf("nothing expired yet: deleted %d, %v", n, err)
			}
			if n, err := tx.DeleteExpiredAuthTokens(now.Add(time.Minute)); err != nil || n != 1 {
				t.Errorf("one expired: deleted %d, %v", n, err)
			}
			if _, err := tx.GetAuthToken("h-old"); !game.IsKind(err, game.NotFound) {
				t.Errorf("expired token still there: %v", err)
			}
			return tx.DeleteCompute("fleet-1", "a")
		})
		View(t, st, func(tx store.Tx) error {
			if _, err := tx.GetAuthToken("h-new"); !game.IsKind(err, game.NotFound) {
				t.Errorf("token of a deleted compute: %v, want NotFound", err)
			}
			if _, err := tx.GetAuthToken("h-b"); err != nil {
				t.Errorf("another compute's token: %v", err)
			}
			return nil
		})
		err := st.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteCompute("fleet-1", "a") })
		if !game.IsKind(err, game.NotFound) {
			t.Errorf("second delete: %v, want NotFound", err)
		}
	})
}
