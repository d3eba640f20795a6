package sessions

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// sessionRequest is what a caller asks of a new game session
// (CreateGameSession, or a placement).
type sessionRequest struct {
	Name             string
	MaxPlayers       int
	Properties       []game.Property
	CreatorID        string
	IdempotencyToken string
	GameSessionID    string // deprecated custom id string
	GameSessionData  string
	MatchmakerData   string
	Location         string
}

// newGameSession builds the record of a new game session on fleet f,
// without writing it: status ACTIVATING, no players, ACCEPT_ALL, the
// fleet's NewGameSessionProtectionPolicy, an ARN as id (game.GameSessionARN).
// The caller fills in where it runs (ComputeName, ProcessID) and inserts it.
//
// When r.IdempotencyToken names a session the fleet already has, it answers
// that session as it is now and replay true, whatever r's other fields.
// Errors: InvalidFleetStatus (fleet not ACTIVE),
// InvalidRequest (seats above the cap; a Location missing on an Anywhere
// fleet of several locations, or not one of the fleet's; CreatorId missing under a creation
// policy), IdempotentParameterMismatch (the deprecated GameSessionId is
// taken), LimitExceeded (ResourceCreationLimitPolicy, or more than one
// session per CreatorId per second on a fleet without a policy).
func (s *Service) newGameSession(tx store.Tx, f *game.Fleet, r sessionRequest) (gs *game.GameSession, replay bool, err error) {
	if f.Status != game.FleetActive {
		return nil, false, game.Errorf(game.InvalidFleetStatus, "The target fleet must be in ACTIVE status; fleet %s is %s", f.ID, f.Status)
	}
	if r.MaxPlayers > s.cfg.MaxPlayersPerSession {
		return nil, false, game.Errorf(game.InvalidRequest, "MaximumPlayerSessionCount %d is above the limit of %d player sessions per game session",
			r.MaxPlayers, s.cfg.MaxPlayersPerSession)
	}
	location, err := sessionLocation(f, r.Location)
	if err != nil {
		return nil, false, err
	}
	idString := r.IdempotencyToken
	if idString != "" {
		old, err := tx.FindGameSession(f.ID, idString)
		if err == nil {
			return old, true, nil
		}
		if !game.IsKind(err, game.NotFound) {
			return nil, false, err
		}
	} else if idString = r.GameSessionID; idString != "" {
		if _, err := tx.FindGameSession(f.ID, idString); err == nil {
			return nil, false, game.Errorf(game.IdempotentParameterMismatch, "A game session with custom ID string %s already exists in fleet %s", idString, f.ID)
		} else if !game.IsKind(err, game.NotFound) {
			return nil, false, err
		}
	} else {
		idString = game.NewGameSessionIDString()
	}
	now := s.clock()
	if err := s.checkCreator(tx, f, r.CreatorID, now); err != nil {
		return nil, false, err
	}
	return &game.GameSession{
		ID:                          s.cfg.Account.GameSessionARN(f.ID, location, idString),
		IDString:                    idString,
		Name:                        r.Name,
		FleetID:                     f.ID,
		FleetARN:                    f.ARN,
		Location:                    location,
		CreationTime:                now,
		MaximumPlayerSessionCount:   r.MaxPlayers,
		Status:                      game.SessionActivating,
		Properties:                  r.Properties,
		PlayerSessionCreationPolicy: game.AcceptAll,
		ProtectionPolicy:            protection(f.NewGameSessionProtectionPolicy),
		CreatorID:                   r.CreatorID,
		GameSessionData:             r.GameSessionData,
		MatchmakerData:              r.MatchmakerData,
	}, false, nil
}

// sessionLocation checks the requested location against the fleet's. An
// Anywhere fleet has no home-region hosting, so GameLift requires Location.
// Anylift places a session that names none in the fleet's location when
// the fleet has exactly one (docs/decisions.md), and keeps the error when
// the choice would be a guess.
func sessionLocation(f *game.Fleet, location string) (string, error) {
	if location == "" {
		if len(f.Locations) == 1 {
			return f.Locations[0], nil
		}
		return "", game.Errorf(game.InvalidRequest, "Location is required for a game session on Anywhere fleet %s", f.ID)
	}
	for _, l := range f.Locations {
		if l == location {
			return location, nil
		}
	}
	return "", game.Errorf(game.InvalidRequest, "Location %s is not a location of fleet %s", location, f.ID)
}

// checkCreator applies the fleet's ResourceCreationLimitPolicy to creator.
func (s *Service) checkCreator(tx store.Tx, f *game.Fleet, creator string, now time.Time) error {
	lim := f.CreationLimit
	policy := lim.NewGameSessionsPerCreator > 0 && lim.PolicyPeriodInMinutes > 0
	switch {
	case policy && creator == "":
		return game.Errorf(game.InvalidRequest, "CreatorId is required: fleet %s has a ResourceCreationLimitPolicy", f.ID)
	case creator == "":
		return nil
	case policy:
		since := now.Add(-time.Duration(lim.PolicyPeriodInMinutes) * time.Minute)
		n, err := tx.CountCreatorSessions(f.ID, creator, since)
		if err != nil {
			return err
		}
		if n >= lim.NewGameSessionsPerCreator {
			return game.Errorf(game.LimitExceeded, "Creator %s has created %d game sessions in fleet %s in the last %d minutes; the fleet's limit is %d",
				creator, n, f.ID, lim.PolicyPeriodInMinutes, lim.NewGameSessionsPerCreator)
		}
		return nil
	}
	n, err := tx.CountCreatorSessions(f.ID, creator, now.Add(-time.Second+time.Millisecond))
	if err != nil {
		return err
	}
	if n > 0 {
		return game.Errorf(game.LimitExceeded, "Creator %s may create at most one game session per second in fleet %s", creator, f.ID)
	}
	return nil
}
