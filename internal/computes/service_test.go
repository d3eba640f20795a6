package computes

import (
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/store"
)

// newService is a compute service over st on clock now, beside the rest
// of the control plane (internal/control) as internal/server wires them:
// each asks the other through its seam.
func newService(st store.Store, now func() time.Time) *Service {
	ctl := control.New(st, control.Config{}, now, nil)
	s := New(st, ctl, Config{}, now)
	ctl.SetComputes(s)
	return s
}
