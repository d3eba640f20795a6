// Package sdkwire holds the messages of GameLift's server SDK 5 WebSocket
// protocol as plain data: one struct per action, with the exact JSON member
// names and types the official SDKs use, and the codec that frames them.
//
// Every frame is one JSON object. The envelope members (Action, RequestId,
// StatusCode, ErrorMessage) sit at the top level beside the payload members.
// Requests flow from the process to the service and are answered with the
// same Action and RequestId and StatusCode 200 (or a 4xx/5xx code and an
// ErrorMessage); pushes flow from the service to the process, carry
// StatusCode 200 and no RequestId, and are never acknowledged.
//
// The package uses the standard library only.
package sdkwire

// Actions a process sends (requests).
const (
	ActionActivateServerProcess             = "ActivateServerProcess"
	ActionHeartbeatServerProcess            = "HeartbeatServerProcess"
	ActionActivateGameSession               = "ActivateGameSession"
	ActionUpdatePlayerSessionCreationPolicy = "UpdatePlayerSessionCreationPolicy"
	ActionAcceptPlayerSession               = "AcceptPlayerSession"
	ActionRemovePlayerSession               = "RemovePlayerSession"
	ActionDescribePlayerSessions            = "DescribePlayerSessions"
	ActionStartMatchBackfill                = "StartMatchBackfill"
	ActionStopMatchBackfill                 = "StopMatchBackfill"
	ActionGetComputeCertificate             = "GetComputeCertificate"
	ActionGetFleetRoleCredentials           = "GetFleetRoleCredentials"
	ActionTerminateServerProcess            = "TerminateServerProcess"
)

// Actions the service sends (pushes).
const (
	ActionCreateGameSession = "CreateGameSession"
	ActionUpdateGameSession = "UpdateGameSession"
	ActionTerminateProcess  = "TerminateProcess"
	ActionRefreshConnection = "RefreshConnection"
)

// StatusOK is the StatusCode of every successful response and every push.
const StatusOK = 200

// Request is the payload of a frame a process sends.
type Request interface{ Action() string }

// Push is the payload of a frame the service sends unprompted.
type Push interface{ Action() string }

// IsPushAction reports whether a is one of the four service pushes.
func IsPushAction(a string) bool {
	switch a {
	case ActionCreateGameSession, ActionUpdateGameSession, ActionTerminateProcess, ActionRefreshConnection:
		return true
	}
	return false
}

// ActivateServerProcess is sent by ProcessReady. The Go SDK always sends
// LogPaths (null when empty); the C++ SDK omits it and omits Port when 0.
type ActivateServerProcess struct {
	SdkVersion     string   `json:"SdkVersion" sdk:"required"`
	SdkLanguage    string   `json:"SdkLanguage" sdk:"required"`
	SdkToolName    string   `json:"SdkToolName,omitempty"`
	SdkToolVersion string   `json:"SdkToolVersion,omitempty"`
	Port           int      `json:"Port,omitempty"`
	LogPaths       []string `json:"LogPaths"`
}

// HeartbeatServerProcess reports the game's health; HealthStatus is always present.
type HeartbeatServerProcess struct {
	HealthStatus bool `json:"HealthStatus" sdk:"required"`
}

// ActivateGameSession tells the service the process is ready for players.
type ActivateGameSession struct {
	GameSessionId string `json:"GameSessionId" sdk:"required"`
}

// UpdatePlayerSessionCreationPolicy sets ACCEPT_ALL or DENY_ALL. Note the
// member name PlayerSessionPolicy.
type UpdatePlayerSessionCreationPolicy struct {
	GameSessionId       string `json:"GameSessionId" sdk:"required"`
	PlayerSessionPolicy string `json:"PlayerSessionPolicy" sdk:"required,enum=ACCEPT_ALL|DENY_ALL"`
}

// AcceptPlayerSession validates a joining player (RESERVED → ACTIVE).
type AcceptPlayerSession struct {
	GameSessionId   string `json:"GameSessionId" sdk:"required"`
	PlayerSessionId string `json:"PlayerSessionId" sdk:"required"`
}

// RemovePlayerSession reports a player gone (→ COMPLETED).
type RemovePlayerSession struct {
	GameSessionId   string `json:"GameSessionId" sdk:"required"`
	PlayerSessionId string `json:"PlayerSessionId" sdk:"required"`
}

// DescribePlayerSessions asks for player sessions by exactly one of
// GameSessionId, PlayerId or PlayerSessionId.
type DescribePlayerSessions struct {
	GameSessionId             string `json:"GameSessionId,omitempty"`
	PlayerId                  string `json:"PlayerId,omitempty"`
	PlayerSessionId           string `json:"PlayerSessionId,omitempty"`
	PlayerSessionStatusFilter string `json:"PlayerSessionStatusFilter,omitempty" sdk:"enum=RESERVED|ACTIVE|COMPLETED|TIMEDOUT"`
	NextToken                 string `json:"NextToken,omitempty"`
	Limit                     int    `json:"Limit,omitempty"`
}

// StartMatchBackfill asks FlexMatch for more players. The Go SDK always
// sends TicketId ("" when unset).
type StartMatchBackfill struct {
	GameSessionArn              string   `json:"GameSessionArn" sdk:"required"`
	MatchmakingConfigurationArn string   `json:"MatchmakingConfigurationArn" sdk:"required"`
	TicketId                    string   `json:"TicketId"`
	Players                     []Player `json:"Players" sdk:"required"`
}

// StopMatchBackfill cancels a backfill ticket.
type StopMatchBackfill struct {
	GameSessionArn              string `json:"GameSessionArn" sdk:"required"`
	MatchmakingConfigurationArn string `json:"MatchmakingConfigurationArn" sdk:"required"`
	TicketId                    string `json:"TicketId" sdk:"required"`
}

// GetComputeCertificate asks for the compute's TLS certificate path.
type GetComputeCertificate struct{}

// GetFleetRoleCredentials asks for credentials of the fleet's IAM role.
type GetFleetRoleCredentials struct {
	RoleArn         string `json:"RoleArn" sdk:"required"`
	RoleSessionName string `json:"RoleSessionName,omitempty"`
}

// TerminateServerProcess is sent by ProcessEnding.
type TerminateServerProcess struct{}

func (*ActivateServerProcess) Action() string  { return ActionActivateServerProcess }
func (*HeartbeatServerProcess) Action() string { return ActionHeartbeatServerProcess }
func (*ActivateGameSession) Action() string    { return ActionActivateGameSession }
func (*UpdatePlayerSessionCreationPolicy) Action() string {
	return ActionUpdatePlayerSessionCreationPolicy
}
func (*AcceptPlayerSession) Action() string     { return ActionAcceptPlayerSession }
func (*RemovePlayerSession) Action() string     { return ActionRemovePlayerSession }
func (*DescribePlayerSessions) Action() string  { return ActionDescribePlayerSessions }
func (*StartMatchBackfill) Action() string      { return ActionStartMatchBackfill }
func (*StopMatchBackfill) Action() string       { return ActionStopMatchBackfill }
func (*GetComputeCertificate) Action() string   { return ActionGetComputeCertificate }
func (*GetFleetRoleCredentials) Action() string { return ActionGetFleetRoleCredentials }
func (*TerminateServerProcess) Action() string  { return ActionTerminateServerProcess }

// DescribePlayerSessionsResult answers DescribePlayerSessions. PlayerSessions
// is always sent, as [] when empty.
type DescribePlayerSessionsResult struct {
	NextToken      string          `json:"NextToken,omitempty"`
	PlayerSessions []PlayerSession `json:"PlayerSessions"`
}

// StartMatchBackfillResult answers StartMatchBackfill.
type StartMatchBackfillResult struct {
	TicketId string `json:"TicketId"`
}

// GetComputeCertificateResult answers GetComputeCertificate.
type GetComputeCertificateResult struct {
	CertificatePath string `json:"CertificatePath"`
	ComputeName     string `json:"ComputeName"`
}

// GetFleetRoleCredentialsResult answers GetFleetRoleCredentials. Expiration
// is epoch milliseconds. An empty AccessKeyId tells the SDKs the process is
// not on a managed fleet, after which they stop asking.
type GetFleetRoleCredentialsResult struct {
	AssumedRoleUserArn string `json:"AssumedRoleUserArn"`
	AssumedRoleId      string `json:"AssumedRoleId"`
	AccessKeyId        string `json:"AccessKeyId"`
	SecretAccessKey    string `json:"SecretAccessKey"`
	SessionToken       string `json:"SessionToken"`
	Expiration         int64  `json:"Expiration"`
}

// PlayerSession is a player session as DescribePlayerSessions returns it.
// CreationTime and TerminationTime are epoch milliseconds (0 when unset).
type PlayerSession struct {
	PlayerId        string `json:"PlayerId"`
	PlayerSessionId string `json:"PlayerSessionId"`
	GameSessionId   string `json:"GameSessionId"`
	FleetId         string `json:"FleetId"`
	PlayerData      string `json:"PlayerData"`
	IpAddress       string `json:"IpAddress"`
	DnsName         string `json:"DnsName"`
	Port            int    `json:"Port"`
	CreationTime    int64  `json:"CreationTime"`
	TerminationTime int64  `json:"TerminationTime"`
	Status          string `json:"Status"`
}

// Player is a player in a backfill request.
type Player struct {
	PlayerId         string                    `json:"PlayerId"`
	Team             string                    `json:"Team,omitempty"`
	PlayerAttributes map[string]AttributeValue `json:"PlayerAttributes,omitempty"`
	LatencyInMs      map[string]int            `json:"LatencyInMs,omitempty"`
}

// AttributeValue is a player attribute: AttrType names which of S, N, SL or
// SDM carries the value (STRING, DOUBLE, STRING_LIST, STRING_DOUBLE_MAP, NONE).
type AttributeValue struct {
	AttrType string             `json:"AttrType"`
	S        string             `json:"S,omitempty"`
	N        float64            `json:"N,omitempty"`
	SL       []string           `json:"SL,omitempty"`
	SDM      map[string]float64 `json:"SDM,omitempty"`
}

// CreateGameSession asks the process to host a game session. Note the
// member name GameSessionName (UpdateGameSession's GameSession says Name),
// and GameProperties as a JSON object, not a list of Key/Value pairs.
type CreateGameSession struct {
	GameSessionId             string            `json:"GameSessionId" sdk:"required"`
	GameSessionName           string            `json:"GameSessionName"`
	MaximumPlayerSessionCount int               `json:"MaximumPlayerSessionCount"`
	Port                      int               `json:"Port"`
	IpAddress                 string            `json:"IpAddress"`
	DnsName                   string            `json:"DnsName"`
	GameSessionData           string            `json:"GameSessionData"`
	MatchmakerData            string            `json:"MatchmakerData"`
	GameProperties            map[string]string `json:"GameProperties"`
}

// GameSession is the game session carried by UpdateGameSession.
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

// UpdateGameSession tells the process its game session changed. UpdateReason
// is MATCHMAKING_DATA_UPDATED, BACKFILL_FAILED, BACKFILL_TIMED_OUT,
// BACKFILL_CANCELLED or UNKNOWN.
type UpdateGameSession struct {
	GameSession      GameSession `json:"GameSession"`
	UpdateReason     string      `json:"UpdateReason"`
	BackfillTicketId string      `json:"BackfillTicketId"`
}

// TerminateProcess asks the process to end; TerminationTime is epoch milliseconds.
type TerminateProcess struct {
	TerminationTime int64 `json:"TerminationTime"`
}

// RefreshConnection asks the process to open a new connection to
// RefreshConnectionEndpoint (a full ws:// or wss:// URL) with AuthToken.
type RefreshConnection struct {
	RefreshConnectionEndpoint string `json:"RefreshConnectionEndpoint" sdk:"required"`
	AuthToken                 string `json:"AuthToken" sdk:"required"`
}

func (*CreateGameSession) Action() string { return ActionCreateGameSession }
func (*UpdateGameSession) Action() string { return ActionUpdateGameSession }
func (*TerminateProcess) Action() string  { return ActionTerminateProcess }
func (*RefreshConnection) Action() string { return ActionRefreshConnection }
