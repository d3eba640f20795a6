package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
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
	faultKey := s.faultKey()
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := s.fleetFor(tx, wire.Deref(in.FleetId), wire.Deref(in.AliasId))
		if err != nil {
			return err
		}
		if gs, replay, err = s.newGameSession(tx, f, req); err != nil || replay {
			return err
		}
		if err := s.refusePlacement(f.ID, gs.Location, faultKey); err != nil {
			return err
		}
		proc, err = tx.ClaimFreeProcess(f.ID, gs.Location, gs.ID, f.Runtime.MaxConcurrentGameSessionActivations)
		if game.IsKind(err, game.NotFound) {
			s.sessionDemand(f.ID) // a scaled fleet grows now
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
		s.startOrHold(proc, gs)
		s.sessionDemand(gs.FleetID)
	}
	out := gameSessionOut(gs)
	// GameLift's CreateGameSession answer on an Anywhere fleet leaves the
	// hosting compute out; DescribeGameSessions and the others name it.
	out.ComputeName = nil
	return &wire.CreateGameSessionOutput{GameSession: out}, nil
}

// startMessage is the CreateGameSession push: onStartGameSession's
// GameSession, properties as an object.
func startMessage(gs *game.GameSession) *sdkwire.CreateGameSession {
	return &sdkwire.CreateGameSession{
		GameSessionId: gs.ID, GameSessionName: gs.Name, MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount,
		Port: gs.Port, IpAddress: gs.IPAddress, DnsName: gs.DNSName,
		GameSessionData: gs.GameSessionData, MatchmakerData: gs.MatchmakerData, GameProperties: propertyMap(gs.Properties),
	}
}

func propertyMap(props []game.Property) map[string]string {
	m := make(map[string]string, len(props))
	for _, p := range props {
		m[p.Key] = p.Value
	}
	return m
}

// sessionMessage is a game session as UpdateGameSession carries it.
func sessionMessage(gs *game.GameSession) sdkwire.GameSession {
	return sdkwire.GameSession{
		GameSessionId: gs.ID, Name: gs.Name, FleetId: gs.FleetID, MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount,
		Port: gs.Port, IpAddress: gs.IPAddress, DnsName: gs.DNSName, GameSessionData: gs.GameSessionData,
		MatchmakerData: gs.MatchmakerData, GameProperties: propertyMap(gs.Properties), Location: gs.Location,
		Status: gs.Status, StatusReason: gs.StatusReason,
	}
}

// hostOf names the process hosting gs; ok is false for a session that
// never reached a process.
func hostOf(gs *game.GameSession) (ProcessRef, bool) {
	return ProcessRef{gs.FleetID, gs.ComputeName, gs.ProcessID}, gs.ProcessID != ""
}

// pushTerminate asks the hosting process to end (onProcessTerminate); its
// ProcessEnding then ends the session. A session whose process cannot be
// reached ends at once: nothing is left to wait for.
func (s *Service) pushTerminate(ctx context.Context, gs *game.GameSession) {
	if ref, ok := hostOf(gs); ok && s.push(ref, &sdkwire.TerminateProcess{TerminationTime: s.clock().UnixMilli()}) {
		return
	}
	if err := s.EndGameSession(ctx, gs.ID, game.SessionTerminated, ""); err != nil {
		s.log.Warn("ending an unreachable game session", "game_session", gs.ID, "err", err)
	}
}
