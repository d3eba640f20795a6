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

// CheckPlayerFilter checks that f has exactly one selector and that
// status, when given, is a player session status, and keeps status in f
// for the GameSessionID form (DescribePlayerSessions, from the API and
// from a server process). Errors: InvalidRequest.
func CheckPlayerFilter(f *PlayerFilter, status string) error {
	n := 0
	for _, v := range []string{f.ID, f.GameSessionID, f.PlayerID} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return game.Errorf(game.InvalidRequest, "Exactly one of PlayerSessionId, GameSessionId and PlayerId is required; %d were given", n)
	}
	switch status {
	case "", game.PlayerReserved, game.PlayerActive, game.PlayerCompleted, game.PlayerTimedOut:
	default:
		return game.Errorf(game.InvalidRequest, "PlayerSessionStatusFilter %q is not one of RESERVED, ACTIVE, COMPLETED, TIMEDOUT", status)
	}
	if f.GameSessionID != "" {
		f.Status = status
	}
	return nil
}

// PlayerSessionTx reads and writes player sessions.
type PlayerSessionTx interface {
	// ReserveSeats creates ps (all RESERVED, all in one game session) if
	// the game session is ACTIVE, accepts players and has a free seat for
	// each; it is all or nothing, and never lets RESERVED + ACTIVE exceed
	// the session's MaximumPlayerSessionCount, even under concurrent calls.
	// When the seats are not free, the session's reservations created at
	// or before expireBefore are TIMEDOUT (at ps[0].CreationTime) and the
	// seats counted again, so a seat freed at exactly the timeout is
	// reusable at once. ReserveSeats fills
	// each ps's FleetID, FleetARN, IPAddress, DNSName and Port from the
	// game session.
	// Errors: NotFound, InvalidGameSessionStatus (not ACTIVE, or DENY_ALL),
	// GameSessionFull.
	ReserveSeats(gameSessionID string, ps []*game.PlayerSession, expireBefore time.Time) error
	// AddReservations creates ps (all RESERVED, all in one game session)
	// whose seats the caller has already decided and holds in memory: it
	// raises the session's seat count by len(ps) and inserts ps, as they
	// are (the caller fills the fields copied from the game session), and
	// expires nothing. The count is guarded as in ReserveSeats, so a
	// session changed since the caller decided (ended, DENY_ALL, filled
	// by another path) still refuses, all or nothing. The change it feeds
	// carries Held = len(ps). Errors: as ReserveSeats; Conflict when a
	// player session id exists.
	AddReservations(gameSessionID string, ps []*game.PlayerSession) error
	// ExpireSessionReservations times out the game session's RESERVED
	// player sessions created at or before cutoff, at time at, freeing
	// their seats, and returns how many it moved.
	ExpireSessionReservations(gameSessionID string, cutoff, at time.Time) (int, error)
	// GetPlayerSession returns one player session; NotFound when absent.
	GetPlayerSession(id string) (*game.PlayerSession, error)
	// ListPlayerSessions lists player sessions in creation order. A
	// malformed p.Token is InvalidRequest.
	ListPlayerSessions(f PlayerFilter, p Page) (list []*game.PlayerSession, next string, err error)
	// SetPlayerSessionStatus moves a player session to status (ACTIVE,
	// COMPLETED or TIMEDOUT) at time at, freeing its seat when it leaves
	// RESERVED/ACTIVE; TerminationTime is set on COMPLETED and TIMEDOUT.
	// It answers the updated record; NotFound when absent. The caller
	// checks that the transition is allowed.
	SetPlayerSessionStatus(id, status string, at time.Time) (*game.PlayerSession, error)
	// ExpireReservations moves at most max RESERVED player sessions
	// created at or before cutoff to TIMEDOUT at time at, freeing their
	// seats, and returns how many it moved. Safe on several nodes at once.
	ExpireReservations(cutoff, at time.Time, max int) (int, error)
	// EndPlayerSessions completes every RESERVED or ACTIVE player session
	// of a game session that ended, at time at, freeing their seats.
	EndPlayerSessions(gameSessionID string, at time.Time) error
}
