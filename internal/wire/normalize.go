package wire

import "strings"

// Normalize folds the ComputeStatus filter to the model's spelling when it
// names one of the model's values in another case: GameLift answers an
// Anywhere compute's status as "Active", and a value copied from an answer
// into the filter selects what it says. Anything else is left for
// Validate to refuse.
func (v *ListComputeInput) Normalize() {
	if v.ComputeStatus == nil {
		return
	}
	for _, s := range ListComputeInputStatusValues {
		if strings.EqualFold(*v.ComputeStatus, s) {
			*v.ComputeStatus = s
			return
		}
	}
}
