package control

import (
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Detail types of GameLift's EventBridge envelopes.
const (
	DetailQueuePlacement = "GameLift Queue Placement Event"
	DetailMatchmaking    = "GameLift Matchmaking Event"
)

// envelope is GameLift's EventBridge event: the shape delivered to the
// event stream, to webhooks and (as the SNS message) to notification
// targets.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// publish appends an event to the outbox inside tx, so that it is
// delivered if and only if tx commits. detail must marshal to a JSON
// object whose "type" member is typ; resource is the queue or
// configuration ARN and target its NotificationTarget.
func (s *Service) publish(tx store.Tx, detailType, typ, resource, target string, detail any) (*game.Notification, error) {
	raw, err := json.Marshal(detail)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	n := &game.Notification{ID: game.NewOrderedUUID(), Time: now, Type: typ, Resource: resource, Target: target}
	n.Envelope, err = json.Marshal(envelope{
		Version:    "0",
		ID:         n.ID,
		DetailType: detailType,
		Source:     "aws.gamelift",
		Account:    s.cfg.Account.ID,
		Time:       game.EventTime(now),
		Region:     s.cfg.Account.Region,
		Resources:  []string{resource},
		Detail:     raw,
	})
	if err != nil {
		return nil, err
	}
	return n, tx.AppendNotification(n)
}
