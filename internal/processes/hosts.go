package processes

// Hosts answers, from memory, whether a server process hosts a game
// session (internal/fleetstate): a yes lets a process's request about its
// own game session skip the store's read; a no sends it to the store,
// which gives the exact error.
type Hosts interface {
	Hosts(fleetID, compute, pid, gameSessionID string) bool
}

// SetHosts makes the checks of a process's own game session ask h first.
// Call it before the service serves requests, and only with a memory that
// every write of the fleets it answers for reaches (one node on SQLite;
// the fleets a node owns on PostgreSQL).
func (s *Service) SetHosts(h Hosts) { s.hosts = h }
