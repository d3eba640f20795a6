package api

import (
	"slices"
	"testing"

	"github.com/anylift/anylift/internal/wire"
)

func TestOperationsListsTheTable(t *testing.T) {
	ops := Operations()
	if !slices.IsSorted(ops) {
		t.Errorf("not sorted: %v", ops)
	}
	for _, want := range []string{"CreateGameSession", "CreateLocation", "DescribeFleetAttributes"} {
		if !slices.Contains(ops, want) {
			t.Errorf("%s missing from %v", want, ops)
		}
	}
	for _, op := range ops {
		if _, ok := wire.OperationErrors[op]; !ok {
			t.Errorf("%s is not an operation of the model", op)
		}
	}
}
