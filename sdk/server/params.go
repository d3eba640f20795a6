// Package server is Anylift's Go server SDK: what a game server links to
// host game sessions. It speaks GameLift's server SDK 5 WebSocket protocol,
// so the same game server runs on Anylift or on Amazon GameLift (Anywhere
// fleets, authenticated by compute auth token).
//
// Two styles are offered over one connection. GameLift's: Init (or the
// package-level InitSDK), ProcessReady with callbacks, ActivateGameSession,
// AcceptPlayerSession, RemovePlayerSession, ProcessEnding, Destroy. And the
// session notifications of engine integrations: NotifyProcessReady with
// OnCreateSessionBegin/End, OnSessionHealthCheck, OnDestroySessionBegin/End,
// and passive destroy (the game session ends when its last player leaves).
package server

import (
	"log/slog"
	"net/http"
	"os"
	"time"
)

// SdkVersion is the SDK 5 protocol version this package speaks, sent as
// sdkVersion and SdkVersion.
const SdkVersion = "5.6.0"

// SdkLanguage is sent as sdkLanguage and SdkLanguage.
const SdkLanguage = "Go"

// ServerParameters say where and as whom to connect. For an Anywhere fleet:
// the compute's WebSocket URL, a process id unique among the compute's
// processes, the compute name as HostID, the fleet id, and a token from
// GetComputeAuthToken. The GAMELIFT_SDK_* environment variables, when set
// and not empty, override these (as in GameLift's SDKs).
type ServerParameters struct {
	WebSocketURL string
	ProcessID    string
	HostID       string
	FleetID      string
	AuthToken    string
}

// LogParameters lists files the service may collect when the session ends.
type LogParameters struct {
	LogPaths []string
}

// ProcessParameters are given to ProcessReady. OnStartGameSession and
// OnProcessTerminate are the callbacks GameLift requires; without
// OnProcessTerminate a TerminateProcess ends the process (ProcessEnding,
// Destroy, exit). Without OnHealthCheck the process reports itself healthy.
// Callbacks run in their own goroutines.
type ProcessParameters struct {
	Port                int
	LogParameters       LogParameters
	OnStartGameSession  func(GameSession)
	OnUpdateGameSession func(UpdateGameSession)
	OnProcessTerminate  func()
	OnHealthCheck       func() bool
}

// Options tune the SDK; zero values take GameLift's timings.
type Options struct {
	HealthCheckInterval time.Duration // between heartbeats: 60 s
	HealthCheckJitter   time.Duration // ± uniform jitter on the interval: 10 s
	HealthCheckTimeout  time.Duration // OnHealthCheck taking longer reports unhealthy: 50 s
	RequestTimeout      time.Duration // waiting for an answer: 20 s
	ActivateTimeout     time.Duration // waiting for ProcessReady's answer: 6 s
	ReconnectMin        time.Duration // first wait before reconnecting: 1 s, doubling
	ReconnectMax        time.Duration // longest wait between attempts: 32 s
	ConnectAttempts     int           // dial attempts in Init: 8
	DrainTimeout        time.Duration // an old connection is kept open this long after RefreshConnection: 5 s

	HTTPClient *http.Client        // for wss:// with a private CA, for example
	Getenv     func(string) string // default os.Getenv
	Logger     *slog.Logger        // default slog.Default()
	Exit       func(code int)      // called when TerminateProcess arrives without OnProcessTerminate: os.Exit
}

func (o *Options) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HealthCheckInterval, 60*time.Second)
	def(&o.HealthCheckJitter, 10*time.Second)
	def(&o.HealthCheckTimeout, 50*time.Second)
	def(&o.RequestTimeout, 20*time.Second)
	def(&o.ActivateTimeout, 6*time.Second)
	def(&o.ReconnectMin, time.Second)
	def(&o.ReconnectMax, 32*time.Second)
	def(&o.DrainTimeout, 5*time.Second)
	if o.ConnectAttempts <= 0 {
		o.ConnectAttempts = 8
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Exit == nil {
		o.Exit = os.Exit
	}
}

// Environment variables read by Init, as in GameLift's SDKs.
const (
	EnvWebSocketURL = "GAMELIFT_SDK_WEBSOCKET_URL"
	EnvAuthToken    = "GAMELIFT_SDK_AUTH_TOKEN"
	EnvProcessID    = "GAMELIFT_SDK_PROCESS_ID"
	EnvHostID       = "GAMELIFT_SDK_HOST_ID"
	EnvFleetID      = "GAMELIFT_SDK_FLEET_ID"
	EnvToolName     = "GAMELIFT_SDK_TOOL_NAME"
	EnvToolVersion  = "GAMELIFT_SDK_TOOL_VERSION"

	// ManagedResource as GAMELIFT_SDK_PROCESS_ID asks for a random process id.
	ManagedResource = "ManagedResource"
)

// withEnvironment returns p with every non-empty GAMELIFT_SDK_* variable
// in place of its member.
func withEnvironment(p ServerParameters, getenv func(string) string) ServerParameters {
	for _, v := range []struct {
		name string
		dst  *string
	}{
		{EnvWebSocketURL, &p.WebSocketURL},
		{EnvAuthToken, &p.AuthToken},
		{EnvProcessID, &p.ProcessID},
		{EnvHostID, &p.HostID},
		{EnvFleetID, &p.FleetID},
	} {
		if s := getenv(v.name); s != "" {
			*v.dst = s
		}
	}
	if p.ProcessID == ManagedResource {
		p.ProcessID = newID()
	}
	return p
}

// GameSession is a game session as the service hands it to the process.
type GameSession struct {
	GameSessionID             string
	Name                      string
	FleetID                   string
	MaximumPlayerSessionCount int
	Port                      int
	IPAddress                 string
	DNSName                   string
	GameSessionData           string
	MatchmakerData            string
	GameProperties            map[string]string
	Location                  string
	Status                    string
	StatusReason              string
}

// UpdateGameSession is what OnUpdateGameSession receives.
type UpdateGameSession struct {
	GameSession      GameSession
	UpdateReason     string // MATCHMAKING_DATA_UPDATED, BACKFILL_FAILED, BACKFILL_TIMED_OUT, BACKFILL_CANCELLED, UNKNOWN
	BackfillTicketID string
}

// PlayerSessionCreationPolicy says whether a game session takes new players.
type PlayerSessionCreationPolicy string

const (
	AcceptAll PlayerSessionCreationPolicy = "ACCEPT_ALL"
	DenyAll   PlayerSessionCreationPolicy = "DENY_ALL"
)

// DescribePlayerSessionsRequest names exactly one of GameSessionID,
// PlayerID and PlayerSessionID.
type DescribePlayerSessionsRequest struct {
	GameSessionID             string
	PlayerID                  string
	PlayerSessionID           string
	PlayerSessionStatusFilter string // RESERVED, ACTIVE, COMPLETED or TIMEDOUT
	NextToken                 string
	Limit                     int
}

// DescribePlayerSessionsResult is one page of player sessions.
type DescribePlayerSessionsResult struct {
	PlayerSessions []PlayerSession
	NextToken      string
}

// PlayerSession is a seat in a game session.
type PlayerSession struct {
	PlayerSessionID string
	PlayerID        string
	GameSessionID   string
	FleetID         string
	PlayerData      string
	IPAddress       string
	DNSName         string
	Port            int
	CreationTime    int64 // epoch milliseconds
	TerminationTime int64 // epoch milliseconds, 0 while open
	Status          string
}
