package server

import (
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// startOwnership makes the node take part in fleet ownership
// (internal/owners) when it is asked to and shares PostgreSQL with
// others: the store fences every fleet write against the node's leases,
// and the service moves leases at every tick.
func (s *Server) startOwnership() {
	db, ok := s.store.(*sqldb.DB)
	if !s.cfg.FleetOwnership || !ok || db.Dialect() != "postgres" {
		return
	}
	m := owners.New(s.svc.NodeID())
	db.SetOwners(m)
	s.svc.SetOwners(m)
	s.owners = m
}
