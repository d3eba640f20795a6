// Package playerwire holds the plain JSON shapes of Anylift's player
// gateway, shared by the gateway and the Go client library. Member names
// follow GameLift's (GameSessionId, IpAddress, ...).
//
// Endpoints (all POST, JSON in and out; a token in Authorization: Bearer):
//
//	/v1/sessions                     CreateSessionRequest  → Seat
//	/v1/sessions/search              SearchRequest         → SearchResult
//	/v1/sessions/join                JoinRequest           → Seat
//	/v1/sessions/rejoin              JoinRequest           → Seat
//	/v1/sessions/leave               LeaveRequest          → LeaveResult
//
// Errors answer a non-2xx status with an Error body.
package playerwire

// Paths of the gateway's endpoints. Game session ids (ARNs, with
// slashes) travel in the body, never in the path.
const (
	PathCreate = "/v1/sessions"
	PathSearch = "/v1/sessions/search"
	PathJoin   = "/v1/sessions/join"
	PathRejoin = "/v1/sessions/rejoin"
	PathLeave  = "/v1/sessions/leave"
)

// Property is a game property.
type Property struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// CreateSessionRequest creates a game session on exactly one of a fleet,
// an alias or a queue, waits until it is ACTIVE and reserves the caller's
// seat in it.
type CreateSessionRequest struct {
	FleetId   string `json:"FleetId,omitempty"`
	AliasId   string `json:"AliasId,omitempty"`
	QueueName string `json:"QueueName,omitempty"`
	// Location is the fleet location; the fleet's first when empty.
	Location                  string     `json:"Location,omitempty"`
	MaximumPlayerSessionCount int32      `json:"MaximumPlayerSessionCount"`
	Name                      string     `json:"Name,omitempty"`
	GameProperties            []Property `json:"GameProperties,omitempty"`
	GameSessionData           string     `json:"GameSessionData,omitempty"`
	// IdempotencyToken makes a retried create answer the same session.
	IdempotencyToken string `json:"IdempotencyToken,omitempty"`
	// PlayerData is stored with the caller's player session.
	PlayerData string `json:"PlayerData,omitempty"`
}

// Seat is a reserved seat in a game session and how to reach its server.
type Seat struct {
	GameSessionId   string `json:"GameSessionId"`
	PlayerSessionId string `json:"PlayerSessionId"`
	IpAddress       string `json:"IpAddress,omitempty"`
	DnsName         string `json:"DnsName,omitempty"`
	Port            int32  `json:"Port"`
	Location        string `json:"Location,omitempty"`
}

// SearchRequest searches ACTIVE game sessions of one fleet or alias with
// SearchGameSessions' filter and sort grammar.
type SearchRequest struct {
	FleetId          string `json:"FleetId,omitempty"`
	AliasId          string `json:"AliasId,omitempty"`
	Location         string `json:"Location,omitempty"`
	FilterExpression string `json:"FilterExpression,omitempty"`
	SortExpression   string `json:"SortExpression,omitempty"`
	Limit            int32  `json:"Limit,omitempty"`
	NextToken        string `json:"NextToken,omitempty"`
}

// Session is a game session as players see it in a search.
type Session struct {
	GameSessionId               string     `json:"GameSessionId"`
	Name                        string     `json:"Name,omitempty"`
	FleetId                     string     `json:"FleetId"`
	Location                    string     `json:"Location,omitempty"`
	Status                      string     `json:"Status"`
	CurrentPlayerSessionCount   int32      `json:"CurrentPlayerSessionCount"`
	MaximumPlayerSessionCount   int32      `json:"MaximumPlayerSessionCount"`
	PlayerSessionCreationPolicy string     `json:"PlayerSessionCreationPolicy,omitempty"`
	GameProperties              []Property `json:"GameProperties,omitempty"`
	// CreationTime is RFC 3339 with milliseconds, UTC.
	CreationTime string `json:"CreationTime,omitempty"`
}

// SearchResult is one page of a search.
type SearchResult struct {
	GameSessions []Session `json:"GameSessions"`
	NextToken    string    `json:"NextToken,omitempty"`
}

// JoinRequest reserves a seat for the caller in a game session.
type JoinRequest struct {
	GameSessionId string `json:"GameSessionId"`
	PlayerData    string `json:"PlayerData,omitempty"`
}

// LeaveRequest ends the caller's player session in the game session: the
// one named, or every seat the caller holds there when empty.
type LeaveRequest struct {
	GameSessionId   string `json:"GameSessionId"`
	PlayerSessionId string `json:"PlayerSessionId,omitempty"`
}

// LeaveResult names the player sessions that were ended.
type LeaveResult struct {
	GameSessionId    string   `json:"GameSessionId"`
	PlayerSessionIds []string `json:"PlayerSessionIds"`
}

// Error is the body of every error answer. Code is stable (see the
// gateway's documentation); Message can be shown to a player or logged.
type Error struct {
	Code          string `json:"Code"`
	Message       string `json:"Message"`
	GameSessionId string `json:"GameSessionId,omitempty"`
	Cause         string `json:"Cause,omitempty"`
}
