package game

import "time"

// Server process statuses. A process is CONNECTED once its SDK has opened
// a connection, ACTIVE after ProcessReady (ActivateServerProcess), and
// TERMINATED when it ends (ProcessEnding, lost, or shut down unhealthy).
const (
	ProcessConnected  = "CONNECTED"
	ProcessActive     = "ACTIVE"
	ProcessTerminated = "TERMINATED"
)

// Process is a game server process on a compute, known by its pID.
type Process struct {
	FleetID     string
	ComputeName string
	PID         string
	Location    string
	Status      string
	Port        int
	LogPaths    []string
	SDKVersion  string
	SDKLanguage string
	// GameSessionID is the session the process hosts or last hosted: a
	// process hosts one game session in its life.
	GameSessionID string
	// Healthy is the last reported health. LastHealthy is when the process
	// last reported healthy, or became ACTIVE: the unhealthy timeout runs
	// from it, and an unhealthy report leaves it as it is. (Its stored
	// name is that of the time of any report, which it used to be.)
	Healthy     bool
	LastHealthy time.Time `json:"LastHeartbeat"`
	// AwaitingHeartbeat is set from ProcessReady until the first heartbeat
	// after it. The process takes a game session meanwhile, but the SDKs
	// drop a CreateGameSession that comes before they know they are ready,
	// and they send their first heartbeat once they know: the start of a
	// session placed in that gap is pushed with the heartbeat's answer.
	AwaitingHeartbeat bool `json:",omitempty"`
	// Connected is false between a dropped connection and either a
	// reconnect or the process being declared lost.
	Connected      bool
	DisconnectedAt time.Time
	// TokenExpires is when the auth token of its connection expires: the
	// connection is refreshed before then.
	TokenExpires time.Time
	// Endpoint is the ws:// or wss:// URL the current connection reached
	// (empty when unknown): a RefreshConnection keeps the process on the
	// same kind of connection.
	Endpoint        string
	CreationTime    time.Time
	TerminationTime time.Time
	// ActivationTime is when the process first became ACTIVE; Abnormal
	// marks a process that ended without ProcessEnding (lost, crashed,
	// unhealthy). Both feed the fleet metrics.
	ActivationTime time.Time
	Abnormal       bool
}

// Free reports whether p can take a new game session.
func (p *Process) Free() bool {
	return p.Status == ProcessActive && p.Connected && p.Healthy && p.GameSessionID == ""
}
