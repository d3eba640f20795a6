package sqldb

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// AddReservations writes reservations decided in memory: the player
// session rows and the seat count, nothing read but the count it returns.
// The UPDATE keeps ReserveSeats' guard; only when it matches no row is the
// record read, to say why (store.SeatRefusal) or that it is NotFound, and
// the caller's transaction fails, which undoes the rows written.
func (t *Tx) AddReservations(gameSessionID string, ps []*game.PlayerSession) error {
	if len(ps) == 0 {
		return nil
	}
	if err := t.fenceSession(gameSessionID); err != nil {
		return err
	}
	// The player sessions first: grouped on PostgreSQL their inserts then
	// go in the same round trip as the seat count's update, and a refused
	// update fails the job, which undoes them.
	for _, p := range ps {
		if err := t.insertPlayer(p); err != nil {
			return err
		}
	}
	var cur int
	var version int64
	err := t.queryRow(`UPDATE game_sessions SET cur_players = cur_players + ?, version = version + 1
		WHERE id = ? AND status = 'ACTIVE' AND policy = 'ACCEPT_ALL' AND cur_players + ? <= max_players
		RETURNING cur_players, version`, len(ps), gameSessionID, len(ps)).Scan(&cur, &version)
	if errNoRows(err) {
		s, err := t.GetGameSession(gameSessionID)
		if err != nil {
			return err
		}
		return store.SeatRefusal(s, len(ps))
	}
	if err != nil {
		return err
	}
	t.note(store.Change{Kind: store.SessionSeats, ID: gameSessionID, Seats: cur, Held: len(ps), Version: version})
	return nil
}

func (t *Tx) ExpireSessionReservations(gameSessionID string, cutoff, at time.Time) (int, error) {
	return t.expireSession(gameSessionID, cutoff, at)
}
