package game

import "time"

// Notification is one event for subscribers: a placement or matchmaking
// event in GameLift's EventBridge envelope, kept in the store's outbox and
// delivered from there to the event stream and to webhooks.
type Notification struct {
	// Seq is the outbox position, assigned by the store when the
	// notification is appended. Seqs increase in commit order: a reader
	// that has seen Seq n has seen every committed notification before it.
	Seq int64 `json:"-"`
	// ID is the envelope's id (a UUID).
	ID string `json:"id"`
	// Time is when the event happened.
	Time time.Time `json:"time"`
	// Type is the detail type name: PlacementFulfilled,
	// MatchmakingSucceeded, ...
	Type string `json:"type"`
	// Resource is the ARN of the queue or matchmaking configuration the
	// event belongs to.
	Resource string `json:"resource"`
	// Target is the resource's NotificationTarget when the event was
	// published (an http(s) URL or an SNS topic ARN), empty for none.
	Target string `json:"target,omitempty"`
	// Envelope is the whole event as delivered: the JSON object with
	// version, id, detail-type, source, account, time, region, resources
	// and detail.
	Envelope []byte `json:"-"`
}

// EventTime formats t as event details do: ISO-8601 UTC with milliseconds
// (the outbox's format).
func EventTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
