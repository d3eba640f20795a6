package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// ProcessTx reads and writes server processes.
type ProcessTx interface {
	// PutProcess inserts or overwrites the process p.
	PutProcess(p *game.Process) error
	// GetProcess returns one process; NotFound when absent.
	GetProcess(fleetID, computeName, pid string) (*game.Process, error)
	// ClaimFreeProcess picks a free process (ACTIVE, connected, healthy,
	// hosting nothing) of the fleet in location, oldest first, skipping
	// computes that already have maxActivating sessions ACTIVATING (0: no
	// cap), and marks it as hosting gameSessionID. NotFound when none is free.
	ClaimFreeProcess(fleetID, location, gameSessionID string, maxActivating int) (*game.Process, error)
	// ListProcesses lists processes, filtered by fleet (empty: all) and
	// status (empty: all but TERMINATED).
	ListProcesses(fleetID, status string, p Page) (list []*game.Process, next string, err error)
	// StaleProcesses returns live processes that disconnected at or before
	// lostBefore, or are ACTIVE with their last healthy report (LastHealthy,
	// the last_heartbeat column) at or before unhealthyBefore, or whose
	// connection token expires at or before refreshBefore.
	StaleProcesses(lostBefore, unhealthyBefore, refreshBefore time.Time, max int) ([]*game.Process, error)
	// NextStale returns the earliest time at which a live process, as the
	// processes are now, meets a condition of StaleProcesses: lostGrace
	// after it disconnected, unhealthyTimeout after its last healthy
	// report (ACTIVE), refreshMargin before its token expires (connected).
	// Zero when no live process has any of those times. Every node's
	// processes count, whatever fleets the node owns.
	NextStale(lostGrace, unhealthyTimeout, refreshMargin time.Duration) (time.Time, error)
	// CountActiveProcesses counts a fleet's ACTIVE processes per location.
	CountActiveProcesses(fleetID string) (map[string]int, error)
}

// LiveProcesses is a memory of the processes that have not ended, and of
// those free to host a new game session, which a store that is the only
// writer of its data consults to read one or claim one instead of
// querying (sqldb.DB.SetLiveProcesses). The store
// calls it from inside its write transactions and feeds it every
// committed ProcessPut and SessionPut; it must be safe for concurrent use.
type LiveProcesses interface {
	// Take picks the free process of the fleet in location that
	// ClaimFreeProcess would pick (oldest first, by creation time then
	// pID), skipping computes with maxActivating game sessions ACTIVATING
	// or taken (0: no cap), and sets it aside: no other Take answers it
	// until it is returned or a committed change says it is no longer
	// free. It answers a copy of the record; ok is false when none is.
	Take(fleetID, location string, maxActivating int) (p *game.Process, ok bool)
	// Return ends a take that did not commit, or whose transaction has
	// ended: the process is free again unless a committed change said
	// otherwise meanwhile. Returning a process whose claim committed does
	// nothing.
	Return(p *game.Process)
	// Count counts, up to max, the free processes of the fleet in location
	// that are not taken.
	Count(fleetID, location string, max int) int
	// Get answers a copy of the process's record as last committed; ok is
	// false for a process that ended or that it does not know.
	Get(fleetID, computeName, pid string) (p *game.Process, ok bool)
	// Version answers the version of the process's row as last committed
	// (the count of its writes); ok is false when Get's would be.
	Version(fleetID, computeName, pid string) (version int64, ok bool)
}

// LiveSessionRecords is a memory of the live game sessions (those that
// have not ended) with their row keys and versions, which a store that
// is the only writer of their fleets consults to read one inside a write
// transaction instead of querying (sqldb.DB.SetLiveSessions). The store
// feeds it every committed SessionPut and SessionSeats; it must be safe
// for concurrent use.
type LiveSessionRecords interface {
	// Record answers a copy of live game session id as last committed,
	// its row key and its row's version (the count of its writes, as the
	// store's version column holds it); ok is false for a session it
	// does not hold live or whose fleet it does not answer for.
	Record(id string) (s *game.GameSession, pk, version int64, ok bool)
}
