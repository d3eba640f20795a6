package localsdk

import "github.com/anylift/anylift/sdk/server"

// The shapes of the local SDK's HTTP bodies: JSON objects whose member
// names are those of GameLift's server SDK and API (docs/local-sdk.md).

// Environment variables the agent gives each process it launches.
const (
	EnvURL   = "ANYLIFT_SDK_HTTP"  // http://127.0.0.1:PORT
	EnvToken = "ANYLIFT_SDK_TOKEN" // the process's bearer token
)

// Event types.
const (
	EventStartGameSession  = "StartGameSession"
	EventUpdateGameSession = "UpdateGameSession"
	EventProcessTerminate  = "ProcessTerminate"
)

// Event is something the service pushed to the process. Seq numbers the
// process's events from 1.
type Event struct {
	Seq              uint64       `json:"Seq"`
	Type             string       `json:"Type"`
	GameSession      *GameSession `json:"GameSession,omitempty"`
	UpdateReason     string       `json:"UpdateReason,omitempty"`
	BackfillTicketId string       `json:"BackfillTicketId,omitempty"`
	TerminationTime  int64        `json:"TerminationTime,omitempty"` // epoch seconds
}

// GameSession is a game session as the process receives it.
type GameSession struct {
	GameSessionId             string            `json:"GameSessionId"`
	Name                      string            `json:"Name"`
	FleetId                   string            `json:"FleetId"`
	MaximumPlayerSessionCount int               `json:"MaximumPlayerSessionCount"`
	Port                      int               `json:"Port"`
	IpAddress                 string            `json:"IpAddress"`
	DnsName                   string            `json:"DnsName"`
	GameSessionData           string            `json:"GameSessionData"`
	MatchmakerData            string            `json:"MatchmakerData"`
	GameProperties            map[string]string `json:"GameProperties"`
	Location                  string            `json:"Location,omitempty"`
	Status                    string            `json:"Status,omitempty"`
	StatusReason              string            `json:"StatusReason,omitempty"`
}

func wireSession(g server.GameSession) *GameSession {
	props := g.GameProperties
	if props == nil {
		props = map[string]string{}
	}
	return &GameSession{GameSessionId: g.GameSessionID, Name: g.Name, FleetId: g.FleetID,
		MaximumPlayerSessionCount: g.MaximumPlayerSessionCount, Port: g.Port, IpAddress: g.IPAddress,
		DnsName: g.DNSName, GameSessionData: g.GameSessionData, MatchmakerData: g.MatchmakerData,
		GameProperties: props, Location: g.Location, Status: g.Status, StatusReason: g.StatusReason}
}

// EventsResult answers GET /v1/events.
type EventsResult struct {
	Events []Event `json:"Events"`
}

// State answers GET /v1/process.
type State struct {
	ProcessId       string `json:"ProcessId"`
	Ready           bool   `json:"Ready"`
	Port            int    `json:"Port,omitempty"`
	Healthy         bool   `json:"Healthy"`
	GameSessionId   string `json:"GameSessionId,omitempty"`
	TerminationTime int64  `json:"TerminationTime,omitempty"` // epoch seconds
	LastEvent       uint64 `json:"LastEvent"`                 // Seq of the last event
}

// ReadyRequest is POST /v1/ready.
type ReadyRequest struct {
	Port     int      `json:"Port"`
	LogPaths []string `json:"LogPaths"`
}

// HealthRequest is POST /v1/health.
type HealthRequest struct {
	Healthy bool `json:"Healthy"`
}

// PlayerSessionRequest is POST /v1/player-sessions/accept and /remove.
type PlayerSessionRequest struct {
	PlayerSessionId string `json:"PlayerSessionId"`
}

// PolicyRequest is POST /v1/player-session-creation-policy.
type PolicyRequest struct {
	PlayerSessionCreationPolicy string `json:"PlayerSessionCreationPolicy"` // ACCEPT_ALL or DENY_ALL
}

// DescribePlayerSessionsRequest is POST /v1/player-sessions/describe:
// exactly one of GameSessionId, PlayerId and PlayerSessionId.
type DescribePlayerSessionsRequest struct {
	GameSessionId             string `json:"GameSessionId"`
	PlayerId                  string `json:"PlayerId"`
	PlayerSessionId           string `json:"PlayerSessionId"`
	PlayerSessionStatusFilter string `json:"PlayerSessionStatusFilter"`
	NextToken                 string `json:"NextToken"`
	Limit                     int    `json:"Limit"`
}

// DescribePlayerSessionsResult answers it.
type DescribePlayerSessionsResult struct {
	PlayerSessions []PlayerSession `json:"PlayerSessions"`
	NextToken      string          `json:"NextToken,omitempty"`
}

// PlayerSession is a seat in a game session; times are epoch milliseconds.
type PlayerSession struct {
	PlayerSessionId string `json:"PlayerSessionId"`
	PlayerId        string `json:"PlayerId"`
	GameSessionId   string `json:"GameSessionId"`
	FleetId         string `json:"FleetId"`
	PlayerData      string `json:"PlayerData"`
	IpAddress       string `json:"IpAddress"`
	DnsName         string `json:"DnsName"`
	Port            int    `json:"Port"`
	CreationTime    int64  `json:"CreationTime"`
	TerminationTime int64  `json:"TerminationTime,omitempty"`
	Status          string `json:"Status"`
}

// StartMatchBackfillRequest is POST /v1/backfill/start. GameSessionArn
// defaults to the process's game session.
type StartMatchBackfillRequest struct {
	GameSessionArn              string   `json:"GameSessionArn"`
	MatchmakingConfigurationArn string   `json:"MatchmakingConfigurationArn"`
	TicketId                    string   `json:"TicketId"`
	Players                     []Player `json:"Players"`
}

// Player is a player of a backfill request, as in GameLift's API.
type Player struct {
	PlayerId         string                    `json:"PlayerId"`
	Team             string                    `json:"Team"`
	PlayerAttributes map[string]AttributeValue `json:"PlayerAttributes"`
	LatencyInMs      map[string]int            `json:"LatencyInMs"`
}

// AttributeValue is one of S, N, SL or SDM, as in GameLift's API.
type AttributeValue struct {
	S   *string            `json:"S,omitempty"`
	N   *float64           `json:"N,omitempty"`
	SL  []string           `json:"SL,omitempty"`
	SDM map[string]float64 `json:"SDM,omitempty"`
}

// StartMatchBackfillResult answers it.
type StartMatchBackfillResult struct {
	TicketId string `json:"TicketId"`
}

// StopMatchBackfillRequest is POST /v1/backfill/stop. GameSessionArn
// defaults to the process's game session.
type StopMatchBackfillRequest struct {
	GameSessionArn              string `json:"GameSessionArn"`
	MatchmakingConfigurationArn string `json:"MatchmakingConfigurationArn"`
	TicketId                    string `json:"TicketId"`
}

// ComputeCertificateResult answers POST /v1/compute-certificate.
type ComputeCertificateResult struct {
	CertificatePath string `json:"CertificatePath"`
	ComputeName     string `json:"ComputeName"`
}

// FleetRoleCredentialsRequest is POST /v1/fleet-role-credentials.
type FleetRoleCredentialsRequest struct {
	RoleArn         string `json:"RoleArn"`
	RoleSessionName string `json:"RoleSessionName"`
}

// FleetRoleCredentialsResult answers it; Expiration is epoch milliseconds.
type FleetRoleCredentialsResult struct {
	AssumedRoleUserArn string `json:"AssumedRoleUserArn"`
	AssumedRoleId      string `json:"AssumedRoleId"`
	AccessKeyId        string `json:"AccessKeyId"`
	SecretAccessKey    string `json:"SecretAccessKey"`
	SessionToken       string `json:"SessionToken"`
	Expiration         int64  `json:"Expiration"`
}

// Error is the body of every refusal.
type Error struct {
	Code    string `json:"Code"`
	Message string `json:"Message"`
}
