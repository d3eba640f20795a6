// Package extapi holds the shapes of Anylift's own HTTP operations, which
// GameLift does not have: fault injection and the status view. Each is a
// POST of a JSON object to Path + the operation's name on the API
// listener, signed with SigV4 like any API request; the answer is a JSON
// object, or an error {"__type", "message"} with GameLift's status codes.
// Plain data, shared by the server, the CLI and tests.
package extapi

import "time"

// Path is where the operations are served: Path + "InjectFault", say.
const Path = "/anylift/v1/"

// The operations.
const (
	OpInjectFault    = "InjectFault"
	OpListFaults     = "ListFaults"
	OpClearFaults    = "ClearFaults"
	OpDescribeStatus = "DescribeStatus"
)

// Fault is a fault as injected (FaultId, Fired and the times are set by
// the service) and as listed.
type Fault struct {
	FaultId string `json:",omitempty"`
	// Kind is one of faults.Kinds: PLACEMENT_FAILURE, PLACEMENT_DELAY,
	// MISS_HEALTH_CHECKS, DROP_CONNECTION, TERMINATE_PROCESS,
	// EXPIRE_RESERVATIONS.
	Kind string
	// FleetId (an id or ARN) is required; the others narrow the scope,
	// each where the kind allows it.
	FleetId         string
	Location        string `json:",omitempty"`
	ComputeName     string `json:",omitempty"`
	ProcessId       string `json:",omitempty"`
	GameSessionId   string `json:",omitempty"`
	PlayerSessionId string `json:",omitempty"`
	// Count: how many times a standing fault fires (listed: how many are
	// left), or the most an immediate one acts on; 0 or absent: no limit.
	Count int `json:",omitempty"`
	// Duration and Delay are Go durations ("90s", "4m").
	Duration string `json:",omitempty"`
	Delay    string `json:",omitempty"`
	// Set by the service.
	Fired     int        `json:",omitempty"`
	CreatedAt *time.Time `json:",omitempty"`
	ExpiresAt *time.Time `json:",omitempty"`
}

// InjectFaultInput is the body of InjectFault.
type InjectFaultInput struct {
	Fault Fault
}

// InjectFaultOutput answers InjectFault: the fault as recorded, and what
// an immediate fault acted on (process ids, or player session ids). A
// standing fault is in force until its Count or Duration is used up or
// ClearFaults ends it; an immediate one without a Duration is not kept.
type InjectFaultOutput struct {
	Fault    Fault
	Affected []string `json:",omitempty"`
}

// ListFaultsInput is the body of ListFaults: the faults of one fleet, or
// of every fleet when FleetId is empty.
type ListFaultsInput struct {
	FleetId string `json:",omitempty"`
}

// ListFaultsOutput answers ListFaults, oldest first.
type ListFaultsOutput struct {
	Faults []Fault
}

// ClearFaultsInput is the body of ClearFaults: fault FaultId, or every
// fault of FleetId, or, when both are empty, every fault.
type ClearFaultsInput struct {
	FaultId string `json:",omitempty"`
	FleetId string `json:",omitempty"`
}

// ClearFaultsOutput answers ClearFaults with the faults it ended.
type ClearFaultsOutput struct {
	Faults []Fault
}

// DescribeStatusInput is the body of DescribeStatus: one fleet, or every
// fleet when FleetId is empty.
type DescribeStatusInput struct {
	FleetId string `json:",omitempty"`
}

// DescribeStatusOutput is what the service runs: per fleet its computes,
// its server processes that have not ended, its game sessions that have
// not ended, and its faults in force. Now is the service's clock.
type DescribeStatusOutput struct {
	Now    time.Time
	Fleets []FleetStatus
	// Truncated says some lists were cut at MaxListed.
	Truncated bool `json:",omitempty"`
}

// MaxListed caps each list of a DescribeStatus answer.
const MaxListed = 500

// FleetStatus is one fleet in DescribeStatus.
type FleetStatus struct {
	FleetId, Name, Status string
	Locations             []string
	Computes              []ComputeStatus
	Processes             []ProcessStatus
	GameSessions          []GameSessionStatus
	Faults                []Fault
	// FaultInjection says the server takes InjectFault.
	FaultInjection bool
}

// ComputeStatus is one compute.
type ComputeStatus struct {
	ComputeName, Location, IpAddress, Status string
}

// ProcessStatus is one server process that has not ended.
type ProcessStatus struct {
	ProcessId, ComputeName, Location string
	Status                           string // CONNECTED (not yet ProcessReady) or ACTIVE
	Connected, Healthy               bool
	LastHealthy                      time.Time // its last healthy report, or when it became ACTIVE
	Port                             int       `json:",omitempty"`
	GameSessionId                    string    `json:",omitempty"` // the live session it hosts
	SdkLanguage                      string    `json:",omitempty"`
}

// GameSessionStatus is one game session that has not ended.
type GameSessionStatus struct {
	GameSessionId, Name, Status, Location string
	ProcessId                             string `json:",omitempty"`
	CurrentPlayerSessionCount             int
	MaximumPlayerSessionCount             int
	CreationTime                          time.Time
}

// Operations lists Anylift's own operations; a key's policy grants them
// as gamelift:<Operation>, like the service's.
var Operations = []string{OpClearFaults, OpDescribeStatus, OpInjectFault, OpListFaults}

// Resources names the fleet a fault is injected into.
func (v *InjectFaultInput) Resources(add func(typ, id string)) { fleetResource(v.Fault.FleetId, add) }

// Resources names the fleet whose faults are listed, if any.
func (v *ListFaultsInput) Resources(add func(typ, id string)) { fleetResource(v.FleetId, add) }

// Resources names the fleet whose faults are cleared, if any. A fault
// named by id alone is cleared with the right on every fleet ("*").
func (v *ClearFaultsInput) Resources(add func(typ, id string)) { fleetResource(v.FleetId, add) }

// Resources names the fleet described, if any.
func (v *DescribeStatusInput) Resources(add func(typ, id string)) { fleetResource(v.FleetId, add) }

func fleetResource(id string, add func(typ, id string)) {
	if id != "" {
		add("fleet", id)
	}
}
