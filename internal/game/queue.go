package game

import "time"

// DefaultQueueTimeout is a queue's TimeoutInSeconds when none is given.
const DefaultQueueTimeout = 600

// Priority criteria of a queue's PriorityConfiguration, and their default
// order.
const (
	PriorityLatency     = "LATENCY"
	PriorityCost        = "COST"
	PriorityDestination = "DESTINATION"
	PriorityLocation    = "LOCATION"
)

// Fallback strategies of a PriorityConfigurationOverride.
const (
	FallbackDefaultAfterSinglePass = "DEFAULT_AFTER_SINGLE_PASS"
	FallbackNone                   = "NONE"
)

// LatencyPolicy caps the latency any player may have to a location while
// it is in force: DurationSeconds (0: until the placement times out).
type LatencyPolicy struct {
	MaxLatencyMs    int
	DurationSeconds int
}

// Queue is a game session queue.
type Queue struct {
	Name            string
	ARN             string
	TimeoutSeconds  int
	LatencyPolicies []LatencyPolicy
	// Destinations are fleet or alias ids or ARNs, as given, in order of
	// preference.
	Destinations []string
	// AllowedLocations restricts placements when not empty.
	AllowedLocations []string
	// PriorityOrder and LocationOrder are the PriorityConfiguration; a
	// queue without one has both empty.
	PriorityOrder      []string
	LocationOrder      []string
	CustomEventData    string
	NotificationTarget string
	CreationTime       time.Time
}

// Placement statuses.
const (
	PlacementPending   = "PENDING"
	PlacementFulfilled = "FULFILLED"
	PlacementCancelled = "CANCELLED"
	PlacementTimedOut  = "TIMED_OUT"
	PlacementFailed    = "FAILED"
)

// PlayerLatency is one player's reported latency to one location.
type PlayerLatency struct {
	PlayerID  string
	Location  string
	LatencyMs float64
}

// DesiredPlayer is a player to seat when the placement is fulfilled.
type DesiredPlayer struct {
	PlayerID   string
	PlayerData string
}

// PlacedPlayer is a seat taken when the placement was fulfilled.
type PlacedPlayer struct {
	PlayerID        string
	PlayerSessionID string
}

// PriorityOverride is a placement's PriorityConfigurationOverride.
type PriorityOverride struct {
	LocationOrder []string
	Fallback      string
}

// Placement is a game session placement request and its outcome. While
// PENDING, the game session fields are provisional: they name the session
// being activated for it, if any.
type Placement struct {
	ID              string
	QueueName       string
	QueueARN        string
	Status          string
	Properties      []Property
	MaxPlayers      int
	GameSessionName string
	GameSessionData string
	MatchmakerData  string
	Latencies       []PlayerLatency
	DesiredPlayers  []DesiredPlayer
	Override        *PriorityOverride
	StartTime       time.Time
	EndTime         time.Time
	// Deadline is when a PENDING placement times out.
	Deadline time.Time

	GameSessionID     string // the session's ARN
	GameSessionRegion string // its location
	FleetID           string
	IPAddress         string
	DNSName           string
	Port              int
	PlacedPlayers     []PlacedPlayer
}

// Ended reports whether the placement reached a final status.
func (p *Placement) Ended() bool { return p.Status != PlacementPending }
