package store

import "github.com/anylift/anylift/internal/game"

// SeatRefusal explains why n seats cannot be taken in game session s,
// whose status, policy and seat counts are those the decision saw: not
// ACTIVE, or not accepting players (InvalidGameSessionStatus), or else
// full (GameSessionFull, naming s.CurrentPlayerSessionCount as the seats
// taken). The store and the memory refuse with the same words.
func SeatRefusal(s *game.GameSession, n int) error {
	switch {
	case s.Status != game.SessionActive:
		return game.Errorf(game.InvalidGameSessionStatus,
			"Game session %s is in status %s; player sessions can be created only in ACTIVE game sessions", s.ID, s.Status)
	case s.PlayerSessionCreationPolicy != game.AcceptAll:
		return game.Errorf(game.InvalidGameSessionStatus,
			"Game session %s has PlayerSessionCreationPolicy %s and does not accept new player sessions", s.ID, s.PlayerSessionCreationPolicy)
	}
	return game.Errorf(game.GameSessionFull,
		"Game session %s is currently full and cannot allow the requested player(s) to join: %d of %d seats taken, %d requested",
		s.ID, s.CurrentPlayerSessionCount, s.MaximumPlayerSessionCount, n)
}
