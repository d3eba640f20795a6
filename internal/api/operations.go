package api

import (
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sessions"
)

// operations is the operation table: every operation served, by name. Each
// area lists its own in its ops_<area>.go file; the queues' and
// placements' are served by qs, FlexMatch's by fm, the container fleets',
// container group definitions' and scaling's by cs, the game and player
// sessions' by ss, the computes' by cp.
func operations(s *control.Service, ss *sessions.Service, qs *queueing.Service, fm *flexmatch.Service, cs *containers.Service, cp *computes.Service) map[string]handler {
	m := map[string]handler{}
	for _, add := range []func(*control.Service, map[string]handler){
		locationOps, tagOps, fleetOps, aliasOps, utilizationOps,
	} {
		add(s, m)
	}
	computeOps(cp, m)
	gameSessionOps(ss, m)
	playerSessionOps(ss, m)
	searchOps(ss, m)
	containerOps(cs, m)
	containerFleetOps(cs, m)
	queueOps(qs, m)
	matchmakingOps(fm, m)
	matchmakerOps(fm, m)
	return m
}

func locationOps(s *control.Service, m map[string]handler) {
	m["CreateLocation"] = op(s.CreateLocation)
	m["ListLocations"] = op(s.ListLocations)
	m["DeleteLocation"] = op(s.DeleteLocation)
}

func tagOps(s *control.Service, m map[string]handler) {
	m["TagResource"] = op(s.TagResource)
	m["UntagResource"] = op(s.UntagResource)
	m["ListTagsForResource"] = op(s.ListTagsForResource)
}
