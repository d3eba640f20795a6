package processes

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The end of a game session, however it comes: its process ends it
// (ProcessEnding, a crash, a lost connection), its activation times out,
// its compute is deregistered or its fleet deleted, or nothing is left to
// tell (PushTerminate). Its player sessions complete with it.

// EndGameSession ends a live game session with status TERMINATED or ERROR
// and the given StatusReason (empty keeps the current one), and completes
// its RESERVED and ACTIVE player sessions. Ending a session that already
// ended changes nothing. NotFound when absent.
func (s *Service) EndGameSession(ctx context.Context, id, status, reason string) error {
	if status != game.SessionTerminated && status != game.SessionError {
		return game.Errorf(game.InvalidRequest, "a game session ends TERMINATED or ERROR, not %s", status)
	}
	return s.update(ctx, func(tx store.Tx) error {
		gs, err := tx.GetGameSession(id)
		if err != nil {
			return err
		}
		return s.endSession(tx, gs, status, reason)
	})
}

// endSession ends gs inside tx; see EndGameSession.
func (s *Service) endSession(tx store.Tx, gs *game.GameSession, status, reason string) error {
	if !gs.Live() {
		return nil
	}
	activating := gs.Status == game.SessionActivating
	now := s.clock()
	gs.Status, gs.TerminationTime = status, now
	if reason != "" {
		gs.StatusReason = reason
	}
	if err := tx.EndPlayerSessions(gs.ID, now); err != nil {
		return err
	}
	gs.CurrentPlayerSessionCount = 0
	if err := tx.UpdateGameSession(gs); err != nil || !activating {
		return err
	}
	return s.placementEnded(tx, gs)
}

// endLostSessions ends sessions whose process is gone: ACTIVATING ones in ERROR, ACTIVE ones TERMINATED with reason
// INTERRUPTED, TERMINATING ones TERMINATED with their reason.
func (s *Service) endLostSessions(tx store.Tx, list []*game.GameSession) error {
	for _, gs := range list {
		status, reason := game.SessionTerminated, ""
		switch gs.Status {
		case game.SessionActivating:
			status = game.SessionError
		case game.SessionActive:
			reason = game.ReasonInterrupted
		}
		if err := s.endSession(tx, gs, status, reason); err != nil {
			return err
		}
	}
	return nil
}

// EndComputeSessions ends the live game sessions hosted on a compute that
// is deregistered, as endLostSessions does.
func (s *Service) EndComputeSessions(tx store.Tx, fleetID, computeName string) error {
	if computeName == "" {
		return nil
	}
	list, err := tx.LiveGameSessions(fleetID, computeName)
	if err != nil {
		return err
	}
	return s.endLostSessions(tx, list)
}

// EndFleetSessions ends the live game sessions of a fleet being deleted,
// as endLostSessions does.
func (s *Service) EndFleetSessions(tx store.Tx, fleetID string) error {
	list, err := tx.LiveGameSessions(fleetID, "")
	if err != nil {
		return err
	}
	return s.endLostSessions(tx, list)
}
