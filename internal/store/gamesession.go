package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// SessionFilter selects game sessions for DescribeGameSessions.
type SessionFilter struct {
	FleetID  string // required unless ID is set
	ID       string // one session by its ARN
	Location string // empty: all locations
	Status   string // empty: all statuses
}

// LocationUsage is what a fleet's game sessions hold in one location:
// the numbers behind DescribeFleetUtilization.
type LocationUsage struct {
	Location           string
	ActiveGameSessions int // ACTIVE
	LiveGameSessions   int // ACTIVATING, ACTIVE or TERMINATING
	CurrentPlayers     int // RESERVED + ACTIVE player sessions
	MaximumPlayers     int // sum of MaximumPlayerSessionCount of ACTIVE sessions
	// BusyComputes counts computes hosting at least one live session.
	BusyComputes int
}

// GameSessionTx reads and writes game sessions.
type GameSessionTx interface {
	// InsertGameSession adds s; Conflict when the fleet already has a
	// session with s.IDString.
	InsertGameSession(s *game.GameSession) error
	// GetGameSession returns the session with this ARN; NotFound when absent.
	GetGameSession(id string) (*game.GameSession, error)
	// FindGameSession returns the fleet's session with this id string (the
	// idempotency token); NotFound when absent.
	FindGameSession(fleetID, idString string) (*game.GameSession, error)
	// LiveGameSessions returns the fleet's sessions that have not ended
	// (ACTIVATING, ACTIVE, TERMINATING), on one compute when computeName is
	// set, in creation order.
	LiveGameSessions(fleetID, computeName string) ([]*game.GameSession, error)
	// BusyComputes returns the names of a fleet's computes that host a
	// live (ACTIVATING, ACTIVE or TERMINATING) session.
	BusyComputes(fleetID string) (map[string]bool, error)
	// UpdateGameSession overwrites the stored session s.ID, properties
	// included; NotFound when absent. CurrentPlayerSessionCount is not
	// written here: seat changes go through PlayerSessionTx.
	UpdateGameSession(s *game.GameSession) error
	// ListGameSessions lists sessions in creation order. A malformed
	// p.Token is InvalidRequest.
	ListGameSessions(f SessionFilter, p Page) (list []*game.GameSession, next string, err error)
	// CountCreatorSessions counts the sessions a creator made in a fleet
	// at or after since (ResourceCreationLimitPolicy).
	CountCreatorSessions(fleetID, creatorID string, since time.Time) (int, error)
	// ActivatingSince returns up to max ACTIVATING sessions created at or
	// before t, oldest first.
	ActivatingSince(t time.Time, max int) ([]*game.GameSession, error)
	// FleetUsage returns the fleet's usage per location.
	FleetUsage(fleetID string) ([]LocationUsage, error)
}
