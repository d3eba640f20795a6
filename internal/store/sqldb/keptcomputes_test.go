package sqldb

import (
	"reflect"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
)

// copyCompute copies the one field of a compute that refers to memory (its
// ports). A field added to game.Compute or game.PortMapping that refers to
// memory too (a pointer, a map, another slice) would be shared between the
// kept compute and its readers' copies: this fails until copyCompute copies
// it.
func TestCopyComputeCoversItsFields(t *testing.T) {
	timeType := reflect.TypeFor[time.Time]()
	var plain func(reflect.Type) bool
	plain = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
			return true
		case reflect.Struct:
			if ty == timeType {
				return true
			}
			for f := range ty.Fields() {
				if !plain(f.Type) {
					return false
				}
			}
			return true
		}
		return false
	}
	for f := range reflect.TypeFor[game.Compute]().Fields() {
		switch {
		case f.Name == "Ports":
			if f.Type != reflect.TypeFor[[]game.PortMapping]() || !plain(f.Type.Elem()) {
				t.Errorf("Compute.Ports is %v: copyCompute copies it as a slice of plain values", f.Type)
			}
		case !plain(f.Type):
			t.Errorf("Compute.%s (%v) refers to memory: copyCompute must copy it", f.Name, f.Type)
		}
	}
}

// clonePlacement and cloneQueue copy every field that refers to memory;
// this fails when a field is added that they would share between copies.
func TestClonePlacementAndQueueCoverTheirFields(t *testing.T) {
	timeType := reflect.TypeFor[time.Time]()
	var plain func(reflect.Type) bool
	plain = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
			return true
		case reflect.Struct:
			if ty == timeType {
				return true
			}
			for f := range ty.Fields() {
				if !plain(f.Type) {
					return false
				}
			}
			return true
		}
		return false
	}
	check := func(ty reflect.Type, cloned map[string]bool) {
		for f := range ty.Fields() {
			switch {
			case cloned[f.Name]:
				elem := f.Type.Elem()
				if f.Name == "Override" {
					if elem != reflect.TypeFor[game.PriorityOverride]() {
						t.Errorf("Placement.Override is %v", f.Type)
					}
					continue
				}
				if f.Type.Kind() != reflect.Slice || !plain(elem) {
					t.Errorf("%s.%s is %v: cloned as a slice of plain values", ty.Name(), f.Name, f.Type)
				}
			case !plain(f.Type):
				t.Errorf("%s.%s (%v) refers to memory: its clone must copy it", ty.Name(), f.Name, f.Type)
			}
		}
	}
	check(reflect.TypeFor[game.Placement](), map[string]bool{"Properties": true, "Latencies": true, "DesiredPlayers": true,
		"PlacedPlayers": true, "Override": true})
	check(reflect.TypeFor[game.PriorityOverride](), map[string]bool{"LocationOrder": true})
	check(reflect.TypeFor[game.Queue](), map[string]bool{"LatencyPolicies": true, "Destinations": true, "AllowedLocations": true,
		"PriorityOrder": true, "LocationOrder": true})
}
