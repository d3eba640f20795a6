package control

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The seam between control and FlexMatch (internal/flexmatch). FlexMatch
// reads and writes its own records (rule sets, configurations, tickets,
// matches) in the store; what it needs of the rest of the control plane it
// asks through the methods below (flexmatch.Control), each run inside the
// caller's transaction unless it says otherwise: an event in the outbox,
// seats reserved in a game session for a backfill. A match's placement is
// the queues' (internal/queueing, flexmatch.Queues), a push to the server
// process hosting a session the processes' (flexmatch.Processes). What control needs of FlexMatch
// it asks through Matchmaker.

// Matchmaker is FlexMatch as control sees it.
type Matchmaker interface {
	// StepMatchmaking runs one step of the matchmaker; the sweeps run it
	// after the placements'.
	StepMatchmaking(ctx context.Context) error
}

// SetMatchmaker makes the sweeps run m's steps. Call it before Run;
// without it nothing is matched. A placement's end reaches FlexMatch from
// the queues (queueing.Matchmaker).
func (s *Service) SetMatchmaker(m Matchmaker) { s.matchmaker = m }

func (s *Service) stepMatchmaking(ctx context.Context) error {
	if s.matchmaker == nil {
		return nil
	}
	return s.matchmaker.StepMatchmaking(ctx)
}

// PublishMatchmakingEvent appends a matchmaking event (DetailMatchmaking)
// of type typ to the outbox inside tx; resource is the configuration's
// ARN, target its NotificationTarget.
func (s *Service) PublishMatchmakingEvent(tx store.Tx, typ, resource, target string, detail any) error {
	_, err := s.publish(tx, DetailMatchmaking, typ, resource, target, detail)
	return err
}

// ReserveMatchSeats reserves a seat in game session gameSessionID for
// each player, all or none, inside tx: RESERVED player sessions, in the
// order given, counting reservations younger than the reservation timeout
// before now. A *game.Error says the session cannot take them.
func (s *Service) ReserveMatchSeats(tx store.Tx, gameSessionID string, playerIDs []string, now time.Time) ([]*game.PlayerSession, error) {
	seats := make([]*game.PlayerSession, 0, len(playerIDs))
	for _, id := range playerIDs {
		seats = append(seats, game.NewPlayerSession(id, "", s.clock()))
	}
	return seats, tx.ReserveSeats(gameSessionID, seats, now.Add(-s.cfg.ReservationTimeout))
}
