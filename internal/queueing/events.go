package queueing

import (
	"strconv"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Placement event types, by final status.
var placementEventTypes = map[string]string{
	game.PlacementFulfilled: "PlacementFulfilled",
	game.PlacementCancelled: "PlacementCancelled",
	game.PlacementTimedOut:  "PlacementTimedOut",
	game.PlacementFailed:    "PlacementFailed",
}

// placementDetail is the detail of a placement event that did not
// fulfil: GameLift's PlacementCancelled, PlacementTimedOut and
// PlacementFailed.
type placementDetail struct {
	Type            string `json:"type"`
	PlacementID     string `json:"placementId"`
	StartTime       string `json:"startTime"`
	EndTime         string `json:"endTime"`
	CustomEventData string `json:"customEventData,omitempty"`
}

// fulfilledDetail is PlacementFulfilled's detail: connection details and
// the seats taken. The port is a string, as GameLift writes it.
type fulfilledDetail struct {
	Type                 string         `json:"type"`
	PlacementID          string         `json:"placementId"`
	Port                 string         `json:"port"`
	GameSessionARN       string         `json:"gameSessionArn"`
	IPAddress            string         `json:"ipAddress"`
	DNSName              string         `json:"dnsName"`
	StartTime            string         `json:"startTime"`
	EndTime              string         `json:"endTime"`
	GameSessionRegion    string         `json:"gameSessionRegion"`
	PlacedPlayerSessions []placedDetail `json:"placedPlayerSessions"`
	CustomEventData      string         `json:"customEventData,omitempty"`
}

type placedDetail struct {
	PlayerID        string `json:"playerId"`
	PlayerSessionID string `json:"playerSessionId"`
}

// endPlacement moves a PENDING placement to its final status at now and,
// in the same transaction, publishes the event to the queue's
// NotificationTarget.
func (s *Service) endPlacement(tx store.Tx, q *game.Queue, p *game.Placement, status string) error {
	p.Status, p.EndTime = status, s.clock()
	if err := tx.UpdatePlacement(p); err != nil {
		return err
	}
	typ := placementEventTypes[status]
	var detail any = placementDetail{Type: typ, PlacementID: p.ID, StartTime: game.EventTime(p.StartTime), EndTime: game.EventTime(p.EndTime),
		CustomEventData: q.CustomEventData}
	if status == game.PlacementFulfilled {
		d := fulfilledDetail{Type: typ, PlacementID: p.ID, Port: strconv.Itoa(p.Port), GameSessionARN: p.GameSessionID,
			IPAddress: p.IPAddress, DNSName: p.DNSName, StartTime: game.EventTime(p.StartTime), EndTime: game.EventTime(p.EndTime),
			GameSessionRegion: p.GameSessionRegion, PlacedPlayerSessions: []placedDetail{}, CustomEventData: q.CustomEventData}
		for _, pp := range p.PlacedPlayers {
			d.PlacedPlayerSessions = append(d.PlacedPlayerSessions, placedDetail{pp.PlayerID, pp.PlayerSessionID})
		}
		detail = d
	}
	if err := s.ctl.PublishPlacementEvent(tx, typ, q.ARN, q.NotificationTarget, detail); err != nil {
		return err
	}
	return s.matchPlacementEnded(tx, p)
}
