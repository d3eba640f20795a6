package game

import (
	"strconv"
	"strings"
	"time"
)

// Container group types.
const (
	ContainerGroupGameServer  = "GAME_SERVER"
	ContainerGroupPerInstance = "PER_INSTANCE"
)

// Container group definition statuses. Anylift copies no images (the
// cluster pulls them), so a definition is READY when it is written.
const (
	ContainerGroupReady   = "READY"
	ContainerGroupCopying = "COPYING"
	ContainerGroupFailed  = "FAILED"
)

// ContainerGroupDefinition is one version of a container group definition:
// the containers a container fleet runs together (as one pod). Versions of
// one name share its type; each update writes a new version.
type ContainerGroupDefinition struct {
	Name               string
	Version            int
	Type               string // ContainerGroupGameServer or ContainerGroupPerInstance
	OperatingSystem    string
	TotalMemoryMiB     int
	TotalVcpu          float64
	GameServer         *ContainerDefinition // GAME_SERVER groups only
	Support            []ContainerDefinition
	VersionDescription string
	Status             string
	StatusReason       string
	CreationTime       time.Time
}

// Containers returns the group's containers, the game server's first.
func (d *ContainerGroupDefinition) Containers() []*ContainerDefinition {
	out := make([]*ContainerDefinition, 0, 1+len(d.Support))
	if d.GameServer != nil {
		out = append(out, d.GameServer)
	}
	for i := range d.Support {
		out = append(out, &d.Support[i])
	}
	return out
}

// ContainerDefinition is one container of a group. ServerSDKVersion is
// the game server container's; Essential, HealthCheck, MemoryMiB and Vcpu
// are support containers' (the game server container is always essential
// and shares the group's limits).
type ContainerDefinition struct {
	Name                string
	ImageURI            string
	ResolvedImageDigest string
	DependsOn           []ContainerDependency
	MountPoints         []ContainerMountPoint
	Environment         []ContainerEnv
	PortRanges          []ContainerPortRange
	ServerSDKVersion    string
	Essential           bool
	HealthCheck         *ContainerHealthCheck
	MemoryMiB           int
	Vcpu                float64
}

// ContainerDependency makes a container wait for another's Condition
// (START, COMPLETE, SUCCESS or HEALTHY).
type ContainerDependency struct {
	Container string
	Condition string
}

// ContainerMountPoint binds a host path into a container.
type ContainerMountPoint struct {
	InstancePath  string
	ContainerPath string
	AccessLevel   string
}

// ContainerEnv is an environment variable of a container.
type ContainerEnv struct {
	Name  string
	Value string
}

// ContainerPortRange is a range of container ports, ends included.
type ContainerPortRange struct {
	From, To int
	Protocol string // TCP or UDP
}

// ContainerHealthCheck is a support container's health check.
type ContainerHealthCheck struct {
	Command     []string
	Interval    int
	Retries     int
	StartPeriod int
	Timeout     int
}

// ContainerGroupDefinitionARN is the ARN of a definition's version (the
// definition as a whole when version is 0).
func (a Account) ContainerGroupDefinitionARN(name string, version int) string {
	if version == 0 {
		return a.arn("containergroupdefinition/" + name)
	}
	return a.arn("containergroupdefinition/" + name + ":" + strconv.Itoa(version))
}

// ContainerGroupRef reads a container group definition's name or ARN
// (or an ARN's resource part, "name:version"): the name, and the version
// after it (0 when none). ok is false when that version is not a positive
// number.
func ContainerGroupRef(ref string) (name string, version int, ok bool) {
	if strings.HasPrefix(ref, "arn:") {
		const typ = ":containergroupdefinition/"
		i := strings.Index(ref, typ)
		if i < 0 {
			return ref, 0, false
		}
		ref = ref[i+len(typ):]
	}
	name, v, has := strings.Cut(ref, ":")
	if !has {
		return name, 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return name, 0, false
	}
	return name, n, true
}

// Compute types of a fleet.
const (
	ComputeAnywhere  = "ANYWHERE"
	ComputeContainer = "CONTAINER"
)

// ContainerFleetIDPrefix starts a container fleet's id, as GameLift's do.
const ContainerFleetIDPrefix = "containerfleet-"

// NewContainerFleetID returns a new container fleet id.
func NewContainerFleetID() string { return ContainerFleetIDPrefix + NewUUID() }

// FleetCreated is the status of a container fleet with no game server
// container group: it exists, and runs nothing.
const FleetCreated = "CREATED"

// ContainerFleet is what a container fleet (a Fleet whose ComputeType is
// ComputeContainer) runs and how.
type ContainerFleet struct {
	RoleARN string
	// GameServerGroup and PerInstanceGroup name the definitions the fleet
	// runs, each at a version (empty Name: none).
	GameServerGroup  ContainerGroupUse
	PerInstanceGroup ContainerGroupUse
	// GroupsPerInstance is how many game server container groups each
	// instance runs.
	GroupsPerInstance int
	// PortFrom-PortTo are the connection ports of an instance; each
	// container port of each group running on it maps to one. PortsSet
	// says they were asked for; otherwise they follow what the fleet runs.
	PortFrom, PortTo   int
	PortsSet           bool
	InboundPermissions []IPPermission
	InstanceType       string
	BillingType        string
	LogDestination     string
	LogGroupARN        string
	LogBucket          string
}

// ContainerGroupUse is a definition a container fleet runs, at a version.
type ContainerGroupUse struct {
	Name    string
	Version int
}

// IPPermission is an inbound permission: a port range, a protocol and the
// addresses allowed.
type IPPermission struct {
	From, To int
	IPRange  string
	Protocol string
}

// LocationCapacity is a fleet's wanted size in one location, in instances.
// ScalingStopped says StopFleetActions suspended its auto-scaling there.
type LocationCapacity struct {
	Location          string
	Desired, Min, Max int
	ScalingStopped    bool `json:",omitempty"`
}

// CapacityIn returns the fleet's capacity in location, and whether it has
// one.
func (f *Fleet) CapacityIn(location string) (LocationCapacity, bool) {
	for _, c := range f.Capacity {
		if c.Location == location {
			return c, true
		}
	}
	return LocationCapacity{Location: location}, false
}

// SetCapacity replaces the fleet's capacity in c.Location.
func (f *Fleet) SetCapacity(c LocationCapacity) {
	for i := range f.Capacity {
		if f.Capacity[i].Location == c.Location {
			f.Capacity[i] = c
			return
		}
	}
	f.Capacity = append(f.Capacity, c)
}

// SlotPorts maps the container ports of game server container group
// number slot of an instance (0 to GroupsPerInstance-1) to its connection
// ports: the instance's range is shared out in order, each group taking
// as many ports as it has container ports, in the order of its
// containers, their ranges and ports.
func SlotPorts(d *ContainerGroupDefinition, f *ContainerFleet, slot int) []PortMapping {
	var ports []PortMapping
	for _, c := range d.Containers() {
		for _, r := range c.PortRanges {
			for p := r.From; p <= r.To; p++ {
				ports = append(ports, PortMapping{Container: c.Name, ContainerPort: p, Protocol: r.Protocol})
			}
		}
	}
	first := f.PortFrom + slot*len(ports)
	for i := range ports {
		ports[i].ConnectionPort = first + i
	}
	return ports
}
