package processes

import (
	"time"

	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/store"
)

// plane is control's service, named apart so that node can embed it
// beside this package's.
type plane = control.Service

// node is one node's control plane as internal/server assembles it, for
// the tests: control, the server processes and the computes over one
// store on one clock, each asking the others through its seam. Each
// service's methods are the node's.
type node struct {
	*Service
	*plane
}

func newNode(st store.Store, cfg control.Config, now func() time.Time) *node {
	ctl := control.New(st, cfg, now, nil)
	c := ctl.Config()
	ps := New(st, ctl, Config{NodeID: c.NodeID, NodeTTL: c.NodeTTL, AuthTokenTTL: c.AuthTokenTTL,
		ReservationTimeout: c.ReservationTimeout, UnhealthyTimeout: c.UnhealthyTimeout, ProcessLostGrace: c.ProcessLostGrace,
		RefreshMargin: c.RefreshMargin, SDKEndpoint: c.SDKEndpoint, SDKEndpointPublic: c.SDKEndpointPublic}, now, nil)
	ctl.SetProcesses(ps)
	ps.SetFaults(ctl)
	cp := computes.New(st, ps, computes.Config{Account: c.Account, AuthTokenTTL: c.AuthTokenTTL, SDKEndpoint: c.SDKEndpoint}, now)
	ctl.SetComputes(cp)
	ps.SetComputes(cp)
	return &node{Service: ps, plane: ctl}
}
