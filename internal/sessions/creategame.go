package sessions

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// CreateGameSession places a new game session on a free server process of
// the fleet (or the alias's fleet) in the requested location: one session
// per process, never more ACTIVATING per compute than the runtime
// configuration's MaxConcurrentGameSessionActivations. The session is
// committed ACTIVATING and then pushed to the process, which answers with
// ActivateGameSession. FleetCapacityExceeded when no process is free.
// Record rules (idempotency, CreatorId limits, location): newGameSession.
func (s *Service) CreateGameSession(ctx context.Context, in *wire.CreateGameSessionInput) (*wire.CreateGameSessionOutput, error) {
	req := sessionRequest{
		Name: wire.Deref(in.Name), MaxPlayers: int(*in.MaximumPlayerSessionCount), Properties: wire.GameProperties(in.GameProperties),
		CreatorID: wire.Deref(in.CreatorId), IdempotencyToken: wire.Deref(in.IdempotencyToken),
		GameSessionID: wire.Deref(in.GameSessionId), GameSessionData: wire.Deref(in.GameSessionData),
		Location: wire.Deref(in.Location),
	}
	var (
		gs     *game.GameSession
		proc   *game.Process
		replay bool
	)
	faultKey := s.ctl.FaultKey()
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := s.ctl.FleetFor(tx, wire.Deref(in.FleetId), wire.Deref(in.AliasId))
		if err != nil {
			return err
		}
		if gs, replay, err = s.newGameSession(tx, f, req); err != nil || replay {
			return err
		}
		if err := s.ctl.RefuseSession(f.ID, gs.Location, faultKey); err != nil {
			return err
		}
		proc, err = tx.ClaimFreeProcess(f.ID, gs.Location, gs.ID, f.Runtime.MaxConcurrentGameSessionActivations)
		if game.IsKind(err, game.NotFound) {
			s.ctl.SessionDemand(f.ID) // a scaled fleet grows now
			return game.Errorf(game.FleetCapacityExceeded,
				"No available server process in fleet %s location %s can host a new game session; retry after a wait", f.ID, gs.Location)
		}
		if err != nil {
			return err
		}
		c, err := tx.GetCompute(proc.FleetID, proc.ComputeName)
		if err != nil {
			return err
		}
		gs.ComputeName, gs.ProcessID = proc.ComputeName, proc.PID
		gs.IPAddress, gs.DNSName, gs.Port = c.IPAddress, c.DNSName, c.ConnectionPort(proc.Port)
		return tx.InsertGameSession(gs)
	})
	if err != nil {
		return nil, err
	}
	if !replay {
		s.ctl.SessionCreated(gs, proc)
	}
	out := gameSessionOut(gs)
	// GameLift's CreateGameSession answer on an Anywhere fleet leaves the
	// hosting compute out; DescribeGameSessions and the others name it.
	out.ComputeName = nil
	return &wire.CreateGameSessionOutput{GameSession: out}, nil
}

// CreatePlacedSession creates placement p's game session on a free
// process of fleet f in location, inside tx: an ACTIVATING session with
// the placement's name, seats, properties and data, claimed on the
// process and given its compute's connection details. It answers nil,
// nil when no process there is free after all (the count was stale, or
// the fleet's activations are capped); the caller pushes the session with
// control's SessionPlaced once tx has committed (queueing.Sessions).
func (s *Service) CreatePlacedSession(tx store.Tx, f *game.Fleet, location string, p *game.Placement) (*game.GameSession, *game.Process, error) {
	gs, _, err := s.newGameSession(tx, f, sessionRequest{Name: p.GameSessionName, MaxPlayers: p.MaxPlayers,
		Properties: p.Properties, GameSessionData: p.GameSessionData, MatchmakerData: p.MatchmakerData, Location: location})
	if err != nil {
		return nil, nil, err
	}
	proc, err := tx.ClaimFreeProcess(f.ID, location, gs.ID, f.Runtime.MaxConcurrentGameSessionActivations)
	if game.IsKind(err, game.NotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := tx.GetCompute(proc.FleetID, proc.ComputeName)
	if err != nil {
		return nil, nil, err
	}
	gs.ComputeName, gs.ProcessID = proc.ComputeName, proc.PID
	gs.IPAddress, gs.DNSName, gs.Port = c.IPAddress, c.DNSName, c.ConnectionPort(proc.Port)
	if err := tx.InsertGameSession(gs); err != nil {
		return nil, nil, err
	}
	return gs, proc, nil
}

// AbandonSession marks the provisional game session id of a queue
// placement that timed out, if any and still ACTIVATING, TERMINATING
// inside tx; it returns the session when its process must be told to end
// (after tx commits).
func (s *Service) AbandonSession(tx store.Tx, id string) (*game.GameSession, error) {
	if id == "" {
		return nil, nil
	}
	gs, err := tx.GetGameSession(id)
	if game.IsKind(err, game.NotFound) {
		return nil, nil
	}
	if err != nil || gs.Status != game.SessionActivating {
		return nil, err
	}
	gs.Status, gs.StatusReason = game.SessionTerminating, game.ReasonTriggeredOnProcessTerminate
	return gs, tx.UpdateGameSession(gs)
}
