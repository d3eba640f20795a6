package sessions

import (
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/store"
)

// testAccount is the account of the tests' services.
var testAccount = game.Account{Region: "us-west-2", ID: "123456789012"}

// newService is a game session service over st on clock now, beside the
// rest of the control plane (internal/control, internal/processes) as
// internal/server wires them: each asks the other through its seam.
func newService(st store.Store, now func() time.Time) *Service {
	ctl := control.New(st, control.Config{Account: testAccount}, now, nil)
	ps := processes.New(st, ctl, processes.Config{NodeID: ctl.NodeID()}, now, nil)
	ctl.SetProcesses(ps)
	ps.SetFaults(ctl)
	s := New(st, ctl, Config{Account: testAccount}, now)
	s.SetProcesses(ps)
	return s
}
