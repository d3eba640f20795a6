package game

import "time"

// Location is a custom location (GameLift Anywhere), or an AWS Region.
type Location struct {
	Name         string
	ARN          string
	CreationTime time.Time
	Tags         []Tag
}

// Fleet statuses used by Anylift: an Anywhere fleet is ACTIVE at once.
const (
	FleetActive     = "ACTIVE"
	FleetDeleting   = "DELETING"
	FleetTerminated = "TERMINATED"
)

// Fleet is an Anywhere fleet (ComputeType ANYWHERE), whose computes are
// registered machines, or a container fleet (CONTAINER), whose computes are
// its game server container groups, run by Anylift on a cluster.
type Fleet struct {
	ID                             string
	ARN                            string
	Name                           string
	Description                    string
	Status                         string
	CreationTime                   time.Time
	TerminationTime                time.Time
	ComputeType                    string
	Locations                      []string // custom locations, in creation order
	NewGameSessionProtectionPolicy string
	CreationLimit                  CreationLimit
	MetricGroups                   []string
	AnywhereCost                   string
	Runtime                        RuntimeConfiguration
	// Capacity is the fleet's wanted size per location (container fleets).
	Capacity []LocationCapacity `json:",omitempty"`
	// Container is a container fleet's configuration; nil otherwise.
	Container *ContainerFleet `json:",omitempty"`
	// Doc holds attributes stored but not interpreted by Anylift (for
	// example ServerLaunchPath on EC2-style requests), as JSON.
	Doc map[string]any
}

// CreationLimit is a fleet's ResourceCreationLimitPolicy; zero fields mean
// "no limit".
type CreationLimit struct {
	NewGameSessionsPerCreator int
	PolicyPeriodInMinutes     int
}

// RuntimeConfiguration tells the agent what to run on each compute.
type RuntimeConfiguration struct {
	ServerProcesses                     []ServerProcess
	MaxConcurrentGameSessionActivations int // 0: no cap
	GameSessionActivationTimeoutSeconds int // 0: the default, 300 s
}

// ServerProcess is one line of a runtime configuration.
type ServerProcess struct {
	LaunchPath           string
	Parameters           string
	ConcurrentExecutions int
}

// Compute statuses.
const (
	ComputeActive      = "ACTIVE"
	ComputePending     = "PENDING"
	ComputeTerminating = "TERMINATING"
	ComputeImpaired    = "IMPAIRED"
)

// Compute is a machine registered to an Anywhere fleet, or a game server
// container group of a container fleet (InstanceID says which instance of
// the fleet runs it).
type Compute struct {
	FleetID         string
	Name            string
	ARN             string
	Location        string
	IPAddress       string
	DNSName         string
	CertificatePath string
	Status          string
	CreationTime    time.Time
	InstanceID      string `json:",omitempty"`
	// Ports maps a game server container group's container ports to the
	// connection ports players reach them at.
	Ports []PortMapping `json:",omitempty"`
	// TerminationTime is when a TERMINATING game server container group
	// is stopped whatever its server processes do: the time they were
	// told in TerminateProcess.
	TerminationTime time.Time `json:",omitzero"`
	// RecycleTime is when a game server container group was found on a
	// node being taken out of service (INSTANCE_RECYCLED): it takes no
	// new server process, and goes once it hosts no game session.
	RecycleTime time.Time `json:",omitzero"`
}

// Leaving reports whether a compute is on its way out (a game server
// container group TERMINATING or recycled): it takes no new server
// process.
func (c *Compute) Leaving() bool {
	return c.Status == ComputeTerminating || !c.RecycleTime.IsZero()
}

// PortMapping is a container port and the connection port it is reached
// at.
type PortMapping struct {
	Container      string
	ContainerPort  int
	ConnectionPort int
	Protocol       string
}

// ConnectionPort is the port players reach a process listening on port
// at: its connection port when the compute maps it, port otherwise.
func (c *Compute) ConnectionPort(port int) int {
	for _, m := range c.Ports {
		if m.ContainerPort == port {
			return m.ConnectionPort
		}
	}
	return port
}

// AuthToken is a compute auth token. Only its hash is stored; Secret is set
// just once, when it is minted.
type AuthToken struct {
	Hash        string
	Secret      string
	FleetID     string
	ComputeName string
	Expires     time.Time
	Created     time.Time
}

// Routing strategy types of an alias.
const (
	RoutingSimple   = "SIMPLE"
	RoutingTerminal = "TERMINAL"
)

// Alias points at a fleet, or nowhere with a message.
type Alias struct {
	ID              string
	ARN             string
	Name            string
	Description     string
	RoutingType     string
	FleetID         string // SIMPLE only
	Message         string // TERMINAL only
	CreationTime    time.Time
	LastUpdatedTime time.Time
}

// Game session statuses and status reasons.
const (
	SessionActivating  = "ACTIVATING"
	SessionActive      = "ACTIVE"
	SessionTerminating = "TERMINATING"
	SessionTerminated  = "TERMINATED"
	SessionError       = "ERROR"

	ReasonInterrupted                 = "INTERRUPTED"
	ReasonTriggeredOnProcessTerminate = "TRIGGERED_ON_PROCESS_TERMINATE"
	ReasonForceTerminated             = "FORCE_TERMINATED"

	AcceptAll = "ACCEPT_ALL"
	DenyAll   = "DENY_ALL"

	NoProtection   = "NoProtection"
	FullProtection = "FullProtection"
)

// Property is a game property.
type Property struct {
	Key   string
	Value string
}

// SetProperty gives props p's value for p's key: it replaces the value of
// the first property with that key, or appends p.
func SetProperty(props []Property, p Property) []Property {
	for i := range props {
		if props[i].Key == p.Key {
			props[i].Value = p.Value
			return props
		}
	}
	return append(props, p)
}

// GameSession is a game session record.
type GameSession struct {
	ID                          string // the full ARN
	IDString                    string // IdempotencyToken or gsess-<uuid>
	Name                        string
	FleetID                     string
	FleetARN                    string
	Location                    string
	ComputeName                 string
	ProcessID                   string
	CreationTime                time.Time
	TerminationTime             time.Time
	CurrentPlayerSessionCount   int
	MaximumPlayerSessionCount   int
	Status                      string
	StatusReason                string
	Properties                  []Property
	IPAddress                   string
	DNSName                     string
	Port                        int
	PlayerSessionCreationPolicy string
	ProtectionPolicy            string
	CreatorID                   string
	GameSessionData             string
	MatchmakerData              string
}

// Live reports whether the session has not ended.
func (s *GameSession) Live() bool {
	return s.Status == SessionActivating || s.Status == SessionActive || s.Status == SessionTerminating
}

// Player session statuses.
const (
	PlayerReserved  = "RESERVED"
	PlayerActive    = "ACTIVE"
	PlayerCompleted = "COMPLETED"
	PlayerTimedOut  = "TIMEDOUT"
)

// PlayerSession is a seat in a game session.
type PlayerSession struct {
	ID              string
	PlayerID        string
	GameSessionID   string
	FleetID         string
	FleetARN        string
	CreationTime    time.Time
	TerminationTime time.Time
	Status          string
	IPAddress       string
	DNSName         string
	Port            int
	PlayerData      string
}

// NewPlayerSession is a new RESERVED player session for playerID, created
// at now, with a new id; the caller ties it to its game session.
func NewPlayerSession(playerID, data string, now time.Time) *PlayerSession {
	return &PlayerSession{ID: NewPlayerSessionID(), PlayerID: playerID, CreationTime: now, Status: PlayerReserved, PlayerData: data}
}

// Occupies reports whether the player session holds a seat.
func (p *PlayerSession) Occupies() bool {
	return p.Status == PlayerReserved || p.Status == PlayerActive
}

// Event is a fleet event.
type Event struct {
	ID         string
	FleetID    string
	ResourceID string
	Code       string
	Message    string
	Time       time.Time
}

// Tag is a resource tag.
type Tag struct {
	Key   string
	Value string
}

// Searchable reports whether a game property key can be searched: keys
// containing '.' are stored but not indexed.
func Searchable(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] == '.' {
			return false
		}
	}
	return true
}

// MinActivationTimeoutSeconds is the smallest GameSessionActivationTimeoutSeconds.
const MinActivationTimeoutSeconds = 1

// DefaultActivationTimeout applies when a runtime configuration sets none.
const DefaultActivationTimeout = 300 * time.Second

// ActivationTimeout is how long a game session may stay ACTIVATING.
func (r RuntimeConfiguration) ActivationTimeout() time.Duration {
	if r.GameSessionActivationTimeoutSeconds <= 0 {
		return DefaultActivationTimeout
	}
	return time.Duration(r.GameSessionActivationTimeoutSeconds) * time.Second
}
