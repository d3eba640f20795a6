package flexmatch

import (
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
)

// plane is control's service and queues the queues', embedded in node
// beside FlexMatch's.
type (
	plane  = control.Service
	queues = queueing.Service
)

// node is one node's control plane as internal/server assembles it:
// control, the game sessions, the queues and FlexMatch over one store on
// one clock, control running the placer and the sweeps, the matchmaker's
// steps among them.
// Each service's methods are the node's.
type node struct {
	*Service
	*plane
	*queues
}

func newNode(st store.Store, cfg control.Config, now func() time.Time) *node {
	ctl := control.New(st, cfg, now, nil)
	ps := processes.New(st, ctl, processes.Config{NodeID: ctl.NodeID(), NodeTTL: ctl.Config().NodeTTL,
		ReservationTimeout: ctl.Config().ReservationTimeout}, now, nil)
	ctl.SetProcesses(ps)
	qs := queueing.New(st, ctl, queueing.Config{Account: ctl.Config().Account, MaxPlayersPerSession: ctl.Config().MaxPlayersPerSession}, now, nil)
	ctl.SetQueues(qs)
	ps.SetQueues(qs)
	qs.SetProcesses(ps)
	qs.SetSessions(sessions.New(st, ctl, sessions.Config{Account: ctl.Config().Account,
		ReservationTimeout: ctl.Config().ReservationTimeout, MaxPlayersPerSession: ctl.Config().MaxPlayersPerSession}, now))
	fm := New(st, ctl, qs, Config{Account: ctl.Config().Account}, now, nil)
	ctl.SetMatchmaker(fm)
	fm.SetProcesses(ps)
	qs.SetMatchmaker(fm)
	return &node{Service: fm, plane: ctl, queues: qs}
}
