package game

import (
	"strconv"
	"strings"
	"time"
)

// Matchmaking configuration modes and backfill modes.
const (
	FlexMatchStandalone = "STANDALONE"
	FlexMatchWithQueue  = "WITH_QUEUE"
	BackfillAutomatic   = "AUTOMATIC"
	BackfillManual      = "MANUAL"
)

// Matchmaking ticket statuses.
const (
	TicketQueued             = "QUEUED"
	TicketSearching          = "SEARCHING"
	TicketRequiresAcceptance = "REQUIRES_ACCEPTANCE"
	TicketPlacing            = "PLACING"
	TicketCompleted          = "COMPLETED"
	TicketFailed             = "FAILED"
	TicketCancelled          = "CANCELLED"
	TicketTimedOut           = "TIMED_OUT"
)

// Match statuses: a proposed match waits for acceptance, then is placed,
// then is done (its tickets ended or went back to the pool).
const (
	MatchAcceptance = "ACCEPTANCE"
	MatchPlacing    = "PLACING"
	MatchDone       = "DONE"
)

// MatchmakingConfiguration is a stored FlexMatch configuration.
type MatchmakingConfiguration struct {
	Name                     string
	Description              string
	QueueARNs                []string
	RequestTimeoutSeconds    int
	AcceptanceRequired       bool
	AcceptanceTimeoutSeconds int
	RuleSetName              string
	NotificationTarget       string
	AdditionalPlayerCount    int
	CustomEventData          string
	Properties               []Property
	GameSessionData          string
	BackfillMode             string
	FlexMatchMode            string
	CreationTime             time.Time
}

// AttributeValue is a player attribute as submitted: exactly one member set.
type AttributeValue struct {
	S   *string            `json:",omitempty"`
	N   *float64           `json:",omitempty"`
	SL  []string           `json:",omitempty"`
	SDM map[string]float64 `json:",omitempty"`
}

// TicketPlayer is one player of a matchmaking ticket.
type TicketPlayer struct {
	ID         string
	Attributes map[string]AttributeValue `json:",omitempty"`
	Team       string                    `json:",omitempty"`
	LatencyMs  map[string]int            `json:",omitempty"`
	// PlayerSessionID is set when the ticket completes in a game session.
	PlayerSessionID string `json:",omitempty"`
}

// MatchTicket is a matchmaking (or backfill) ticket.
type MatchTicket struct {
	ID             string
	ConfigName     string
	Status         string
	StatusReason   string `json:",omitempty"`
	StatusMessage  string `json:",omitempty"`
	StartTime      time.Time
	EndTime        time.Time
	Deadline       time.Time // request timeout
	Players        []TicketPlayer
	MatchID        string `json:",omitempty"`
	Backfill       bool   `json:",omitempty"`
	AutoBackfill   bool   `json:",omitempty"`
	GameSessionARN string `json:",omitempty"` // backfill target, then the session of a completed ticket
	IPAddress      string `json:",omitempty"`
	DNSName        string `json:",omitempty"`
	Port           int    `json:",omitempty"`
}

// Active reports whether the ticket is still being processed.
func (t *MatchTicket) Active() bool {
	switch t.Status {
	case TicketQueued, TicketSearching, TicketRequiresAcceptance, TicketPlacing:
		return true
	}
	return false
}

// Match is a proposed match and its progress.
type Match struct {
	ID         string
	ConfigName string
	Status     string
	// Tickets in match order; the team of each player is on the ticket.
	TicketIDs []string
	// Answers holds the acceptance answers so far: player → accepted.
	Answers        map[string]bool `json:",omitempty"`
	AcceptDeadline time.Time
	// Locations acceptable to every ticket, best first.
	Locations []string `json:",omitempty"`
	// GameSessionARN is the session a backfill match fills.
	GameSessionARN string `json:",omitempty"`
	// RuleSetName, AcceptanceRequired and AcceptanceTimeoutSeconds are
	// the settings the match was proposed with.
	RuleSetName              string `json:",omitempty"`
	AcceptanceRequired       bool   `json:",omitempty"`
	AcceptanceTimeoutSeconds int    `json:",omitempty"`
	CreationTime             time.Time
	// Placements counts the placements started for the match; a timed-out
	// placement is retried under a new id while the tickets have time.
	Placements int `json:",omitempty"`
}

// PlacementID is the id of the match's current placement: the match id,
// then the match id with "-r<n>" for the n-th retry.
func (m *Match) PlacementID() string {
	if m.Placements <= 1 {
		return m.ID
	}
	return m.ID + "-r" + strconv.Itoa(m.Placements-1)
}

// MatchOfPlacement is the inverse of Match.PlacementID.
func MatchOfPlacement(placementID string) string {
	if i := strings.LastIndex(placementID, "-r"); i >= 0 {
		return placementID[:i]
	}
	return placementID
}
