package computes

import (
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/store"
)

// newService is a compute service over st on clock now, beside the rest
// of the control plane (internal/control and internal/processes) as
// internal/server wires them: each asks the others through its seam.
func newService(st store.Store, now func() time.Time) *Service {
	ctl := control.New(st, control.Config{}, now, nil)
	ps := processes.New(st, ctl, processes.Config{NodeID: ctl.NodeID()}, now, nil)
	ctl.SetProcesses(ps)
	s := New(st, ps, Config{}, now)
	ctl.SetComputes(s)
	ps.SetComputes(s)
	return s
}
