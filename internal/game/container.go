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
