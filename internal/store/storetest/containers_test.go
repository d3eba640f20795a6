package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// TestContainerFleets: container fleets are fleets of their own kind,
// listed apart, with the definitions they run.
func TestContainerFleets(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		container := func(id string, at time.Time, group string, version int) *game.Fleet {
			return &game.Fleet{ID: id, ARN: "arn:" + id, Name: id, Status: game.FleetActive, CreationTime: at,
				ComputeType: game.ComputeContainer, Locations: []string{"us-west-2"},
				Capacity: []game.LocationCapacity{{Location: "us-west-2", Desired: 2, Max: 3}},
				Container: &game.ContainerFleet{RoleARN: "arn:role", GameServerGroup: game.ContainerGroupUse{Name: group, Version: version},
					PerInstanceGroup: game.ContainerGroupUse{Name: "daemons", Version: 1}, GroupsPerInstance: 2, PortFrom: 4192, PortTo: 4195}}
		}
		Update(t, st, func(tx store.Tx) error {
			for _, f := range []*game.Fleet{
				container("containerfleet-a", t0, "arena", 1),
				container("containerfleet-b", t0.Add(time.Second), "arena", 2),
				container("containerfleet-c", t0.Add(2*time.Second), "duel", 1),
				{ID: "fleet-x", Status: game.FleetActive, CreationTime: t0, ComputeType: game.ComputeAnywhere, Locations: []string{"custom-x"}},
			} {
				if err := tx.InsertFleet(f); err != nil {
					return err
				}
			}
			return nil
		})
		ids := func(list []*game.Fleet) (out []string) {
			for _, f := range list {
				out = append(out, f.ID)
			}
			return out
		}
		View(t, st, func(tx store.Tx) error {
			f, err := tx.GetFleet("containerfleet-a")
			if err != nil {
				return err
			}
			if want := container("containerfleet-a", t0, "arena", 1); !reflect.DeepEqual(f, want) {
				t.Errorf("round trip\n got %+v\nwant %+v", f, want)
			}
			for _, tc := range []struct {
				group   string
				version int
				want    []string
			}{
				{"", 0, []string{"containerfleet-a", "containerfleet-b", "containerfleet-c"}},
				{"arena", 0, []string{"containerfleet-a", "containerfleet-b"}},
				{"arena", 2, []string{"containerfleet-b"}},
				{"daemons", 1, []string{"containerfleet-a", "containerfleet-b", "containerfleet-c"}},
				{"none", 0, nil},
			} {
				list, next, err := tx.ListContainerFleets(tc.group, tc.version, store.Page{})
				if err != nil || next != "" || !reflect.DeepEqual(ids(list), tc.want) {
					t.Errorf("ListContainerFleets(%q, %d) = %v %q %v, want %v", tc.group, tc.version, ids(list), next, err, tc.want)
				}
			}
			page, next, err := tx.ListContainerFleets("", 0, store.Page{Limit: 2})
			if err != nil || len(page) != 2 || next == "" {
				t.Fatalf("first page %v %q %v", ids(page), next, err)
			}
			if page, next, err = tx.ListContainerFleets("", 0, store.Page{Limit: 2, Token: next}); err != nil || next != "" ||
				!reflect.DeepEqual(ids(page), []string{"containerfleet-c"}) {
				t.Errorf("second page %v %q %v", ids(page), next, err)
			}
			uses, err := tx.FleetsUsingContainerGroup("arena")
			if want := []store.FleetGroupUse{{FleetID: "containerfleet-a", Version: 1}, {FleetID: "containerfleet-b", Version: 2}}; err != nil || !reflect.DeepEqual(uses, want) {
				t.Errorf("FleetsUsingContainerGroup = %v %v, want %v", uses, err, want)
			}
			return nil
		})
		// A changed fleet runs what it says now; a deleted one, nothing.
		Update(t, st, func(tx store.Tx) error {
			f, err := tx.GetFleet("containerfleet-a")
			if err != nil {
				return err
			}
			f.Container.GameServerGroup = game.ContainerGroupUse{Name: "duel", Version: 1}
			if err := tx.UpdateFleet(f); err != nil {
				return err
			}
			return tx.DeleteFleet("containerfleet-b")
		})
		View(t, st, func(tx store.Tx) error {
			if uses, err := tx.FleetsUsingContainerGroup("arena"); err != nil || len(uses) != 0 {
				t.Errorf("arena after update and delete: %v %v", uses, err)
			}
			list, _, err := tx.ListContainerFleets("duel", 1, store.Page{})
			if err != nil || !reflect.DeepEqual(ids(list), []string{"containerfleet-a", "containerfleet-c"}) {
				t.Errorf("duel after update: %v %v", ids(list), err)
			}
			return nil
		})
	})
}

// TestContainerGroupVersions: version numbers are never given out twice,
// and a definition goes with its last version.
func TestContainerGroupVersions(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		d := &game.ContainerGroupDefinition{Name: "arena", Type: game.ContainerGroupGameServer, Status: game.ContainerGroupReady,
			CreationTime: t0, TotalMemoryMiB: 1024, TotalVcpu: 0.5,
			GameServer: &game.ContainerDefinition{Name: "game", ImageURI: "registry.example/game:1", Essential: true,
				PortRanges: []game.ContainerPortRange{{From: 7777, To: 7777, Protocol: "UDP"}}}}
		Update(t, st, func(tx store.Tx) error {
			if err := tx.InsertContainerGroup(d); err != nil {
				return err
			}
			for range 2 {
				if err := tx.AddContainerGroupVersion(d); err != nil {
					return err
				}
			}
			if _, err := tx.DeleteContainerGroupVersion("arena", 3); err != nil {
				return err
			}
			return tx.AddContainerGroupVersion(d)
		})
		if d.Version != 4 {
			t.Errorf("version after deleting the latest: %d, want 4", d.Version)
		}
		if err := st.Update(t.Context(), func(tx store.Tx) error { return tx.InsertContainerGroup(d) }); !game.IsKind(err, game.Conflict) {
			t.Errorf("a taken name: %v, want Conflict", err)
		}
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetContainerGroup("arena", 0)
			if err != nil || !reflect.DeepEqual(got, d) {
				t.Errorf("latest = %+v %v, want %+v", got, err, d)
			}
			if vs, err := tx.ContainerGroupVersions("arena"); err != nil || !reflect.DeepEqual(vs, []int{4, 2, 1}) {
				t.Errorf("versions %v %v", vs, err)
			}
			return nil
		})
		Update(t, st, func(tx store.Tx) error {
			for _, v := range []int{4, 2} {
				if gone, err := tx.DeleteContainerGroupVersion("arena", v); err != nil || gone {
					t.Errorf("delete version %d: gone %v %v", v, gone, err)
				}
			}
			gone, err := tx.DeleteContainerGroupVersion("arena", 1)
			if !gone {
				t.Errorf("the last version went without the definition")
			}
			return err
		})
		View(t, st, func(tx store.Tx) error {
			if _, err := tx.ContainerGroupVersions("arena"); !game.IsKind(err, game.NotFound) {
				t.Errorf("versions of a deleted definition: %v", err)
			}
			if list, _, err := tx.ListContainerGroups("", store.Page{}); err != nil || len(list) != 0 {
				t.Errorf("list after delete: %v %v", list, err)
			}
			return nil
		})
	})
}
