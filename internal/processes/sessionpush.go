package processes

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
)

// What a game session's server process is sent about it: its start
// (onStartGameSession), its changes (onUpdateGameSession) and the request
// to end (onProcessTerminate).

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
func hostOf(gs *game.GameSession) (Ref, bool) {
	return Ref{FleetID: gs.FleetID, ComputeName: gs.ComputeName, PID: gs.ProcessID}, gs.ProcessID != ""
}

// PushTerminate asks the hosting process to end (onProcessTerminate); its
// ProcessEnding then ends the session. A session whose process cannot be
// reached ends at once: nothing is left to wait for.
func (s *Service) PushTerminate(ctx context.Context, gs *game.GameSession) {
	if ref, ok := hostOf(gs); ok && s.push(ref, &sdkwire.TerminateProcess{TerminationTime: s.clock().UnixMilli()}) {
		return
	}
	if err := s.EndGameSession(ctx, gs.ID, game.SessionTerminated, ""); err != nil {
		s.log.Warn("ending an unreachable game session", "game_session", gs.ID, "err", err)
	}
}

// PushSessionUpdate tells the server process hosting gs, when it is
// connected, that its session changed for reason (a backfill's outcome,
// backfillTicketID naming the request). Call it after the change commits.
func (s *Service) PushSessionUpdate(gs *game.GameSession, reason, backfillTicketID string) {
	if ref, ok := hostOf(gs); ok {
		s.push(ref, &sdkwire.UpdateGameSession{GameSession: sessionMessage(gs), UpdateReason: reason, BackfillTicketId: backfillTicketID})
	}
}
