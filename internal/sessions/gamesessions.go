package sessions

import (
	"context"
	"slices"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// DescribeGameSessions lists game sessions: one by GameSessionId (across
// fleets), or a fleet's (FleetId or AliasId), in one Location or all, with
// an optional StatusFilter. An unknown GameSessionId is NotFound.
func (s *Service) DescribeGameSessions(ctx context.Context, in *wire.DescribeGameSessionsInput) (*wire.DescribeGameSessionsOutput, error) {
	out := &wire.DescribeGameSessionsOutput{GameSessions: []wire.GameSession{}}
	list, next, err := s.listGameSessions(ctx, sessionQuery{in.FleetId, in.AliasId, in.GameSessionId, in.Location, in.StatusFilter, in.Limit, in.NextToken})
	if err != nil {
		return nil, err
	}
	for _, gs := range list {
		out.GameSessions = append(out.GameSessions, *gameSessionOut(gs))
	}
	out.NextToken = wire.String(next)
	return out, nil
}

// DescribeGameSessionDetails is DescribeGameSessions with each session's
// ProtectionPolicy.
func (s *Service) DescribeGameSessionDetails(ctx context.Context, in *wire.DescribeGameSessionDetailsInput) (*wire.DescribeGameSessionDetailsOutput, error) {
	out := &wire.DescribeGameSessionDetailsOutput{GameSessionDetails: []wire.GameSessionDetail{}}
	list, next, err := s.listGameSessions(ctx, sessionQuery{in.FleetId, in.AliasId, in.GameSessionId, in.Location, in.StatusFilter, in.Limit, in.NextToken})
	if err != nil {
		return nil, err
	}
	for _, gs := range list {
		out.GameSessionDetails = append(out.GameSessionDetails, wire.GameSessionDetail{
			GameSession:      gameSessionOut(gs),
			ProtectionPolicy: wire.String(protection(gs.ProtectionPolicy)),
		})
	}
	out.NextToken = wire.String(next)
	return out, nil
}

// sessionQuery is what DescribeGameSessions and its Details twin share.
type sessionQuery struct {
	fleetID, aliasID, id, location, status *string
	limit                                  *int32
	token                                  *string
}

// describableStatuses are the StatusFilter values GameLift accepts.
var describableStatuses = []string{game.SessionActive, game.SessionTerminated, game.SessionActivating, game.SessionTerminating}

func (s *Service) listGameSessions(ctx context.Context, q sessionQuery) (list []*game.GameSession, next string, err error) {
	f, page, err := sessionArgs(q)
	if err != nil {
		return nil, "", err
	}
	if list, next, ok, err := s.liveList(q, f, page); ok || err != nil {
		return list, next, err
	}
	return s.storeList(ctx, q, f, page)
}

// sessionArgs checks q and returns its filter and page.
func sessionArgs(q sessionQuery) (store.SessionFilter, store.Page, error) {
	f := store.SessionFilter{ID: wire.Deref(q.id), Location: wire.Deref(q.location), Status: wire.Deref(q.status)}
	page := store.Page{Limit: int(wire.Deref(q.limit)), Token: wire.Deref(q.token)}
	if f.Status != "" && !slices.Contains(describableStatuses, f.Status) {
		return f, page, game.Errorf(game.InvalidRequest, "StatusFilter %q is not one of ACTIVE, TERMINATED, ACTIVATING, TERMINATING", f.Status)
	}
	return f, page, nil
}

// storeList answers listGameSessions from the store.
func (s *Service) storeList(ctx context.Context, q sessionQuery, f store.SessionFilter, page store.Page) (list []*game.GameSession, next string, err error) {
	err = s.view(ctx, func(tx store.Tx) error {
		if f.ID == "" || q.fleetID != nil || q.aliasID != nil {
			fl, err := s.ctl.FleetFor(tx, wire.Deref(q.fleetID), wire.Deref(q.aliasID))
			if err != nil {
				return err
			}
			f.FleetID = fl.ID
		}
		list, next, err = tx.ListGameSessions(f, page)
		if err == nil && f.ID != "" && len(list) == 0 && q.token == nil {
			return game.Errorf(game.NotFound, "game session %s not found", f.ID)
		}
		return err
	})
	return list, next, err
}

// UpdateGameSession changes a session's seats, name, creation and
// protection policies, and merges GameProperties into its own (new keys
// added, existing keys overwritten, none deleted). Only ACTIVATING and
// ACTIVE sessions can change (InvalidGameSessionStatus otherwise).
// Lowering the seats below the current count evicts nobody. The hosting
// process is told nothing: GameLift calls a server's onUpdateGameSession
// only with match backfill results (flexmatch/backfill.go), each with its
// UpdateReason, and has no reason for a plain update.
func (s *Service) UpdateGameSession(ctx context.Context, in *wire.UpdateGameSessionInput) (*wire.UpdateGameSessionOutput, error) {
	if in.MaximumPlayerSessionCount != nil && int(*in.MaximumPlayerSessionCount) > s.cfg.MaxPlayersPerSession {
		return nil, game.Errorf(game.InvalidRequest, "MaximumPlayerSessionCount %d is above the limit of %d player sessions per game session",
			*in.MaximumPlayerSessionCount, s.cfg.MaxPlayersPerSession)
	}
	var gs *game.GameSession
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if gs, err = tx.GetGameSession(*in.GameSessionId); err != nil {
			return err
		}
		if gs.Status != game.SessionActivating && gs.Status != game.SessionActive {
			return game.Errorf(game.InvalidGameSessionStatus, "Game session %s is in status %s and can no longer be updated", gs.ID, gs.Status)
		}
		if err := applySessionUpdate(gs, in); err != nil {
			return err
		}
		return tx.UpdateGameSession(gs)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateGameSessionOutput{GameSession: gameSessionOut(gs)}, nil
}

// maxGameProperties is GameLift's cap on a session's properties.
const maxGameProperties = 16

func applySessionUpdate(gs *game.GameSession, in *wire.UpdateGameSessionInput) error {
	if in.MaximumPlayerSessionCount != nil {
		gs.MaximumPlayerSessionCount = int(*in.MaximumPlayerSessionCount)
	}
	if in.Name != nil {
		gs.Name = *in.Name
	}
	if in.PlayerSessionCreationPolicy != nil {
		gs.PlayerSessionCreationPolicy = *in.PlayerSessionCreationPolicy
	}
	if in.ProtectionPolicy != nil {
		gs.ProtectionPolicy = *in.ProtectionPolicy
	}
	merged := mergeProperties(gs.Properties, wire.GameProperties(in.GameProperties))
	if len(merged) > maxGameProperties {
		return game.Errorf(game.InvalidRequest, "GameProperties: the game session would have %d properties after the merge; at most %d are allowed",
			len(merged), maxGameProperties)
	}
	gs.Properties = merged
	return nil
}

// mergeProperties overwrites old's values with add's and appends add's new
// keys, keeping the order of first appearance.
func mergeProperties(old, add []game.Property) []game.Property {
	out := append([]game.Property{}, old...)
	for _, p := range add {
		out = game.SetProperty(out, p)
	}
	return out
}

// TerminateGameSession starts ending a live session.
// TRIGGER_ON_PROCESS_TERMINATE moves it to TERMINATING (reason
// TRIGGERED_ON_PROCESS_TERMINATE); the process endpoint tells the process
// and ends the session when it answers (EndGameSession). FORCE_TERMINATE
// needs the GameLift Agent on an Anywhere fleet, so it is InvalidRequest.
// Sessions in ERROR, TERMINATING or TERMINATED: InvalidGameSessionStatus.
func (s *Service) TerminateGameSession(ctx context.Context, in *wire.TerminateGameSessionInput) (*wire.TerminateGameSessionOutput, error) {
	var gs *game.GameSession
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if gs, err = tx.GetGameSession(*in.GameSessionId); err != nil {
			return err
		}
		if gs.Status != game.SessionActivating && gs.Status != game.SessionActive {
			return game.Errorf(game.InvalidGameSessionStatus, "Game session %s is in status %s and cannot be terminated", gs.ID, gs.Status)
		}
		if *in.TerminationMode == wire.TerminationModeForceTerminate {
			return game.Errorf(game.InvalidRequest,
				"TerminationMode FORCE_TERMINATE is not supported on Anywhere fleets without the GameLift Agent; use TRIGGER_ON_PROCESS_TERMINATE")
		}
		gs.Status, gs.StatusReason = game.SessionTerminating, game.ReasonTriggeredOnProcessTerminate
		return tx.UpdateGameSession(gs)
	})
	if err != nil {
		return nil, err
	}
	s.pushTerminate(ctx, gs)
	return &wire.TerminateGameSessionOutput{GameSession: gameSessionOut(gs)}, nil
}

func protection(p string) string {
	if p == "" {
		return game.NoProtection
	}
	return p
}
