package sessions

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// gameSessionOut is a session as GameLift shows it. GameProperties is
// always present, empty when the session has none.
func gameSessionOut(gs *game.GameSession) *wire.GameSession {
	out := &wire.GameSession{
		GameSessionId:               wire.String(gs.ID),
		Name:                        wire.String(gs.Name),
		FleetId:                     wire.String(gs.FleetID),
		FleetArn:                    wire.String(gs.FleetARN),
		CreationTime:                wire.NewTime(gs.CreationTime),
		CurrentPlayerSessionCount:   wire.Int32(gs.CurrentPlayerSessionCount),
		MaximumPlayerSessionCount:   wire.Int32(gs.MaximumPlayerSessionCount),
		Status:                      wire.String(gs.Status),
		StatusReason:                wire.String(gs.StatusReason),
		GameProperties:              []wire.GameProperty{},
		IpAddress:                   wire.String(gs.IPAddress),
		DnsName:                     wire.String(gs.DNSName),
		PlayerSessionCreationPolicy: wire.String(gs.PlayerSessionCreationPolicy),
		CreatorId:                   wire.String(gs.CreatorID),
		GameSessionData:             wire.String(gs.GameSessionData),
		MatchmakerData:              wire.String(gs.MatchmakerData),
		Location:                    wire.String(gs.Location),
		ComputeName:                 wire.String(gs.ComputeName),
	}
	if !gs.TerminationTime.IsZero() {
		out.TerminationTime = wire.NewTime(gs.TerminationTime)
	}
	if gs.Port != 0 {
		out.Port = wire.Int32(gs.Port)
	}
	for _, p := range gs.Properties {
		out.GameProperties = append(out.GameProperties, wire.GameProperty{Key: &p.Key, Value: &p.Value})
	}
	return out
}

// playerSessionOut is a player session as GameLift shows it.
func playerSessionOut(p *game.PlayerSession) wire.PlayerSession {
	out := wire.PlayerSession{
		PlayerSessionId: wire.String(p.ID),
		PlayerId:        wire.String(p.PlayerID),
		GameSessionId:   wire.String(p.GameSessionID),
		FleetId:         wire.String(p.FleetID),
		FleetArn:        wire.String(p.FleetARN),
		CreationTime:    wire.NewTime(p.CreationTime),
		Status:          wire.String(p.Status),
		IpAddress:       wire.String(p.IPAddress),
		DnsName:         wire.String(p.DNSName),
		PlayerData:      wire.String(p.PlayerData),
	}
	if !p.TerminationTime.IsZero() {
		out.TerminationTime = wire.NewTime(p.TerminationTime)
	}
	if p.Port != 0 {
		out.Port = wire.Int32(p.Port)
	}
	return out
}
