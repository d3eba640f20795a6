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
