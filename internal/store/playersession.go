package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// PlayerFilter selects player sessions: exactly one of ID, GameSessionID
// and PlayerID. Status filters the GameSessionID form only.
type PlayerFilter struct {
	ID            string
	GameSessionID string
	PlayerID      string
	Status        string
}

// PlayerSessionTx reads and writes player sessions.
type PlayerSessionTx interface {
	// ReserveSeats creates ps (all RESERVED, all in one game session) if
	// the game session is ACTIVE, accepts players and has a free seat for
	// each; it is all or nothing, and never lets RESERVED + ACTIVE exceed
	// the session's MaximumPlayerSessionCount, even under concurrent calls.
	// Errors: NotFound, InvalidGameSessionStatus, GameSessionFull.
	ReserveSeats(gameSessionID string, ps []*game.PlayerSession) error
	// GetPlayerSession returns one player session; NotFound when absent.
	GetPlayerSession(id string) (*game.PlayerSession, error)
	// ListPlayerSessions lists player sessions in creation order.
	ListPlayerSessions(f PlayerFilter, p Page) (list []*game.PlayerSession, next string, err error)
	// SetPlayerSessionStatus moves a player session to status (ACTIVE,
	// COMPLETED or TIMEDOUT) at time at, freeing its seat when it leaves
	// RESERVED/ACTIVE. It answers the updated record.
	SetPlayerSessionStatus(id, status string, at time.Time) (*game.PlayerSession, error)
	// ExpireReservations moves every RESERVED player session created
	// before cutoff to TIMEDOUT, freeing seats, and returns how many.
	ExpireReservations(cutoff, at time.Time) (int, error)
	// EndPlayerSessions completes every RESERVED or ACTIVE player session
	// of a game session that ended.
	EndPlayerSessions(gameSessionID string, at time.Time) error
}
