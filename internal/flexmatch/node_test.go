package flexmatch

import (
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/store"
)

// plane is control's service, embedded in node beside FlexMatch's.
type plane = control.Service

// node is one node's control plane as internal/server assembles it:
// control and FlexMatch over one store on one clock, control's sweeps
// running the matchmaker's steps. Each service's methods are the node's.
type node struct {
	*Service
	*plane
}

func newNode(st store.Store, cfg control.Config, now func() time.Time) *node {
	ctl := control.New(st, cfg, now, nil)
	fm := New(st, ctl, Config{Account: ctl.Config().Account}, now, nil)
	ctl.SetMatchmaker(fm)
	return &node{Service: fm, plane: ctl}
}
