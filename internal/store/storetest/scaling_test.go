package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// TestScalingPolicies: policies are unique by fleet and name, replaced by
// a put of the same name, listed by name a page at a time and by status,
// found by the timer's query, and gone with their fleet.
func TestScalingPolicies(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		fleet := func(id string) *game.Fleet {
			return &game.Fleet{ID: id, Status: game.FleetActive, CreationTime: t0, ComputeType: game.ComputeContainer,
				Locations: []string{"us-west-2"}, Capacity: []game.LocationCapacity{{Location: "us-west-2", Desired: 1, Max: 4}},
				Container: &game.ContainerFleet{GroupsPerInstance: 1}}
		}
		buffer := &game.ScalingPolicy{FleetID: "containerfleet-a", Name: "buffer", Status: game.ScalingPolicyActive,
			PolicyType: game.PolicyTargetBased, MetricName: "PercentAvailableGameSessions", TargetValue: 20}
		rule := &game.ScalingPolicy{FleetID: "containerfleet-a", Name: "idle", Status: game.ScalingPolicyActive,
			PolicyType: game.PolicyRuleBased, MetricName: "PercentIdleInstances", ComparisonOperator: "GreaterThanThreshold",
			Threshold: 50, EvaluationPeriods: 10, AdjustmentType: "ChangeInCapacity", Adjustment: -1}
		other := &game.ScalingPolicy{FleetID: "containerfleet-b", Name: "buffer", Status: "ERROR",
			PolicyType: game.PolicyTargetBased, MetricName: "PercentAvailableGameSessions", TargetValue: 10}
		Update(t, st, func(tx store.Tx) error {
			for _, f := range []*game.Fleet{fleet("containerfleet-a"), fleet("containerfleet-b")} {
				if err := tx.InsertFleet(f); err != nil {
					return err
				}
			}
			for _, p := range []*game.ScalingPolicy{buffer, rule, other} {
				if err := tx.PutScalingPolicy(p); err != nil {
					return err
				}
			}
			return nil
		})
		names := func(list []*game.ScalingPolicy) (out []string) {
			for _, p := range list {
				out = append(out, p.Name)
			}
			return out
		}
		View(t, st, func(tx store.Tx) error {
			got, err := tx.GetScalingPolicy("containerfleet-a", "idle")
			if err != nil || !reflect.DeepEqual(got, rule) {
				t.Errorf("round trip\n got %+v %v\nwant %+v", got, err, rule)
			}
			if _, err := tx.GetScalingPolicy("containerfleet-b", "idle"); !game.IsKind(err, game.NotFound) {
				t.Errorf("another fleet's policy: %v, want NotFound", err)
			}
			page, next, err := tx.ListScalingPolicies("containerfleet-a", "", store.Page{Limit: 1})
			if err != nil || len(page) != 1 || page[0].Name != "buffer" || next == "" {
				t.Fatalf("first page %v %q %v", names(page), next, err)
			}
			page, next, err = tx.ListScalingPolicies("containerfleet-a", "", store.Page{Limit: 1, Token: next})
			if err != nil || len(page) != 1 || page[0].Name != "idle" || next != "" {
				t.Errorf("second page %v %q %v", names(page), next, err)
			}
			if page, _, err := tx.ListScalingPolicies("containerfleet-b", game.ScalingPolicyActive, store.Page{}); err != nil || len(page) != 0 {
				t.Errorf("ACTIVE of fleet b: %v %v", names(page), err)
			}
			for typ, want := range map[string][]string{"": {"containerfleet-a"}, game.PolicyRuleBased: {"containerfleet-a"}, "nothing": nil} {
				if got, err := tx.ScaledFleets(typ); err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("ScaledFleets(%q) = %v %v, want %v", typ, got, err, want)
				}
			}
			return nil
		})

		// A put of the same name replaces; a delete removes.
		changed := *buffer
		changed.TargetValue, changed.ActedAt = 35, t0.Add(time.Minute)
		Update(t, st, func(tx store.Tx) error {
			if err := tx.PutScalingPolicy(&changed); err != nil {
				return err
			}
			if err := tx.DeleteScalingPolicy("containerfleet-a", "idle"); err != nil {
				return err
			}
			if err := tx.DeleteScalingPolicy("containerfleet-a", "idle"); !game.IsKind(err, game.NotFound) {
				t.Errorf("deleting twice: %v, want NotFound", err)
			}
			return nil
		})
		View(t, st, func(tx store.Tx) error {
			list, _, err := tx.ListScalingPolicies("containerfleet-a", "", store.Page{})
			if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], &changed) {
				t.Errorf("after replace and delete: %+v %v", list, err)
			}
			return nil
		})

		// The fleet goes, and its policies with it.
		Update(t, st, func(tx store.Tx) error { return tx.DeleteFleet("containerfleet-a") })
		View(t, st, func(tx store.Tx) error {
			if list, _, err := tx.ListScalingPolicies("containerfleet-a", "", store.Page{}); err != nil || len(list) != 0 {
				t.Errorf("policies of a deleted fleet: %v %v", names(list), err)
			}
			if got, err := tx.ScaledFleets(""); err != nil || len(got) != 0 {
				t.Errorf("ScaledFleets after the delete: %v %v", got, err)
			}
			return nil
		})
	})
}
