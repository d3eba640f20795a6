package server

import (
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// startOwnership makes the node take part in fleet ownership
// (internal/owners) when it is asked to and shares PostgreSQL with
// others: the store fences every fleet write against the node's leases,
// the service moves leases at every tick, and the node holds the fleets
// it owns in memory (ownedMemory).
func (s *Server) startOwnership() {
	db, ok := s.store.(*sqldb.DB)
	if !s.cfg.FleetOwnership || !ok || db.Dialect() != "postgres" {
		return
	}
	m := owners.New(s.svc.NodeID())
	db.SetOwners(m)
	s.svc.SetOwners(m)
	s.owners = m
	s.ownedMemory(db, m)
}
