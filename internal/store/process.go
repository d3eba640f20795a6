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
	// CountActiveProcesses counts a fleet's ACTIVE processes per location.
	CountActiveProcesses(fleetID string) (map[string]int, error)
}
