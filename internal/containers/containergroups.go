package containers

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Container group definitions: what a container fleet runs on each of its
// instances (a pod, on Kubernetes). Nothing is copied from the registry:
// the cluster pulls the images, so a definition is READY when written.

// CreateContainerGroupDefinition stores the first version of a new
// definition, with its tags. ConflictException when the name is taken.
func (s *Service) CreateContainerGroupDefinition(ctx context.Context, in *wire.CreateContainerGroupDefinitionInput) (*wire.CreateContainerGroupDefinitionOutput, error) {
	d := &game.ContainerGroupDefinition{
		Name:               *in.Name,
		Type:               wire.Deref(in.ContainerGroupType),
		OperatingSystem:    *in.OperatingSystem,
		TotalMemoryMiB:     int(*in.TotalMemoryLimitMebibytes),
		TotalVcpu:          *in.TotalVcpuLimit,
		GameServer:         gameServerContainerIn(in.GameServerContainerDefinition),
		Support:            supportContainersIn(in.SupportContainerDefinitions),
		VersionDescription: wire.Deref(in.VersionDescription),
		Status:             game.ContainerGroupReady,
		CreationTime:       s.clock(),
	}
	if d.Type == "" {
		d.Type = game.ContainerGroupGameServer
	}
	if err := checkContainerGroup(d); err != nil {
		return nil, err
	}
	err := s.update(ctx, func(tx store.Tx) error {
		if err := tx.InsertContainerGroup(d); err != nil {
			return err
		}
		return tx.PutTags(s.cfg.Account.ContainerGroupDefinitionARN(d.Name, 0), wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateContainerGroupDefinitionOutput{ContainerGroupDefinition: s.containerGroupOut(d)}, nil
}

// containerGroupVersion reads a Name member (name or ARN) and a version
// member: the name and the version asked for (0: the latest).
// InvalidRequest when an ARN's version and the member disagree.
func containerGroupVersion(nameOrARN string, member *int32, memberName string) (string, int, error) {
	name, v, ok := game.ContainerGroupRef(nameOrARN)
	if !ok {
		return "", 0, game.Errorf(game.InvalidRequest, "Name %s: the version after the last ':' must be a positive number", nameOrARN)
	}
	if member != nil {
		if v != 0 && v != int(*member) {
			return "", 0, game.Errorf(game.InvalidRequest, "Name %s names version %d, %s says %d", nameOrARN, v, memberName, *member)
		}
		v = int(*member)
	}
	return name, v, nil
}

// DescribeContainerGroupDefinition returns one version of a definition:
// the one VersionNumber (or the ARN) names, else the latest.
func (s *Service) DescribeContainerGroupDefinition(ctx context.Context, in *wire.DescribeContainerGroupDefinitionInput) (*wire.DescribeContainerGroupDefinitionOutput, error) {
	name, v, err := containerGroupVersion(*in.Name, in.VersionNumber, "VersionNumber")
	if err != nil {
		return nil, err
	}
	var d *game.ContainerGroupDefinition
	err = s.view(ctx, func(tx store.Tx) error {
		d, err = tx.GetContainerGroup(name, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeContainerGroupDefinitionOutput{ContainerGroupDefinition: s.containerGroupOut(d)}, nil
}

// ListContainerGroupDefinitions lists the latest version of every
// definition, by name, a page at a time.
func (s *Service) ListContainerGroupDefinitions(ctx context.Context, in *wire.ListContainerGroupDefinitionsInput) (*wire.ListContainerGroupDefinitionsOutput, error) {
	out := &wire.ListContainerGroupDefinitionsOutput{ContainerGroupDefinitions: []wire.ContainerGroupDefinition{}}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListContainerGroups(wire.Deref(in.ContainerGroupType), store.RequestPage(in.Limit, in.NextToken))
		for _, d := range list {
			out.ContainerGroupDefinitions = append(out.ContainerGroupDefinitions, *s.containerGroupOut(d))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// ListContainerGroupDefinitionVersions lists every version of one
// definition, newest first (a version in an ARN is ignored).
func (s *Service) ListContainerGroupDefinitionVersions(ctx context.Context, in *wire.ListContainerGroupDefinitionVersionsInput) (*wire.ListContainerGroupDefinitionVersionsOutput, error) {
	name, _, _ := game.ContainerGroupRef(*in.Name)
	out := &wire.ListContainerGroupDefinitionVersionsOutput{ContainerGroupDefinitions: []wire.ContainerGroupDefinition{}}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListContainerGroupVersions(name, store.RequestPage(in.Limit, in.NextToken))
		for _, d := range list {
			out.ContainerGroupDefinitions = append(out.ContainerGroupDefinitions, *s.containerGroupOut(d))
		}
		out.NextToken = wire.String(next)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateContainerGroupDefinition writes a new version: the source version
// (SourceVersionNumber, the ARN's version, else the latest) with the
// members given replacing its own. A support container list given
// replaces the source's whole (empty: none). The type cannot change.
func (s *Service) UpdateContainerGroupDefinition(ctx context.Context, in *wire.UpdateContainerGroupDefinitionInput) (*wire.UpdateContainerGroupDefinitionOutput, error) {
	name, v, err := containerGroupVersion(*in.Name, in.SourceVersionNumber, "SourceVersionNumber")
	if err != nil {
		return nil, err
	}
	var d *game.ContainerGroupDefinition
	err = s.update(ctx, func(tx store.Tx) error {
		if d, err = tx.GetContainerGroup(name, v); err != nil {
			return err
		}
		if in.GameServerContainerDefinition != nil {
			d.GameServer = gameServerContainerIn(in.GameServerContainerDefinition)
		}
		if in.SupportContainerDefinitions != nil {
			d.Support = supportContainersIn(in.SupportContainerDefinitions)
		}
		if in.TotalMemoryLimitMebibytes != nil {
			d.TotalMemoryMiB = int(*in.TotalMemoryLimitMebibytes)
		}
		if in.TotalVcpuLimit != nil {
			d.TotalVcpu = *in.TotalVcpuLimit
		}
		if in.OperatingSystem != nil {
			d.OperatingSystem = *in.OperatingSystem
		}
		// A version's description is its own.
		d.VersionDescription = wire.Deref(in.VersionDescription)
		d.Status, d.StatusReason, d.CreationTime = game.ContainerGroupReady, "", s.clock()
		if err := checkContainerGroup(d); err != nil {
			return err
		}
		return tx.AddContainerGroupVersion(d)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateContainerGroupDefinitionOutput{ContainerGroupDefinition: s.containerGroupOut(d)}, nil
}

// DeleteContainerGroupDefinition deletes one version (VersionNumber, or
// the ARN's version), every version but the newest VersionCountToRetain,
// or, with neither, the whole definition. The definition and its tags go
// with its last version. A version a fleet runs is not deleted.
func (s *Service) DeleteContainerGroupDefinition(ctx context.Context, in *wire.DeleteContainerGroupDefinitionInput) (*wire.DeleteContainerGroupDefinitionOutput, error) {
	name, v, err := containerGroupVersion(*in.Name, in.VersionNumber, "VersionNumber")
	if err != nil {
		return nil, err
	}
	if v != 0 && in.VersionCountToRetain != nil {
		return nil, game.Errorf(game.InvalidRequest, "give a version to delete or VersionCountToRetain, not both")
	}
	err = s.update(ctx, func(tx store.Tx) error {
		versions, err := tx.ContainerGroupVersions(name)
		if err != nil {
			return err
		}
		doomed := versions
		switch {
		case v != 0:
			doomed = []int{v}
		case in.VersionCountToRetain != nil:
			doomed = versions[min(int(*in.VersionCountToRetain), len(versions)):]
		}
		users, err := tx.FleetsUsingContainerGroup(name)
		if err != nil {
			return err
		}
		for _, u := range users {
			if slices.Contains(doomed, u.Version) {
				return game.Errorf(game.InvalidRequest, "container group definition %s version %d is used by fleet %s", name, u.Version, u.FleetID)
			}
		}
		for _, dv := range doomed {
			gone, err := tx.DeleteContainerGroupVersion(name, dv)
			if err != nil {
				return err
			}
			if gone {
				return tx.DeleteAllTags(s.cfg.Account.ContainerGroupDefinitionARN(name, 0))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeleteContainerGroupDefinitionOutput{}, nil
}

// minServerSDK is the oldest server SDK a game server container may use
// (container fleets need 5.2.0 or later).
var minServerSDK = [3]int{5, 2, 0}

// checkContainerGroup checks what the model cannot: the containers a type
// allows, unique container names, dependencies on containers of the
// group without cycles, port ranges, and the group's limits covering its
// containers'.
func checkContainerGroup(d *game.ContainerGroupDefinition) error {
	switch d.Type {
	case game.ContainerGroupGameServer:
		if d.GameServer == nil {
			return game.Errorf(game.InvalidRequest, "GameServerContainerDefinition is required when ContainerGroupType is GAME_SERVER")
		}
		if len(d.Support) > 8 {
			return game.Errorf(game.InvalidRequest, "a GAME_SERVER container group has at most 8 support containers, not %d", len(d.Support))
		}
		if !sdkAtLeast(d.GameServer.ServerSDKVersion, minServerSDK) {
			return game.Errorf(game.InvalidRequest, "GameServerContainerDefinition.ServerSdkVersion %s: container fleets need server SDK 5.2.0 or later", d.GameServer.ServerSDKVersion)
		}
	case game.ContainerGroupPerInstance:
		if d.GameServer != nil {
			return game.Errorf(game.InvalidRequest, "a PER_INSTANCE container group has no GameServerContainerDefinition")
		}
		essential := false
		for _, c := range d.Support {
			essential = essential || c.Essential
		}
		if !essential {
			return game.Errorf(game.InvalidRequest, "a PER_INSTANCE container group needs at least one support container, and one of them Essential")
		}
	}
	byName := map[string]*game.ContainerDefinition{}
	var vcpu float64
	for _, c := range d.Containers() {
		if byName[c.Name] != nil {
			return game.Errorf(game.InvalidRequest, "container name %s is used twice in the group", c.Name)
		}
		byName[c.Name] = c
		if c.MemoryMiB > d.TotalMemoryMiB {
			return game.Errorf(game.InvalidRequest, "container %s: MemoryHardLimitMebibytes %d is more than the group's TotalMemoryLimitMebibytes %d", c.Name, c.MemoryMiB, d.TotalMemoryMiB)
		}
		vcpu += c.Vcpu
	}
	if vcpu > d.TotalVcpu {
		return game.Errorf(game.InvalidRequest, "the containers reserve %g vCPU in all, more than the group's TotalVcpuLimit %g", vcpu, d.TotalVcpu)
	}
	for _, c := range d.Containers() {
		for _, dep := range c.DependsOn {
			target := byName[dep.Container]
			if target == nil || target == c {
				return game.Errorf(game.InvalidRequest, "container %s depends on %s, which is not another container of the group", c.Name, dep.Container)
			}
			if (dep.Condition == "COMPLETE" || dep.Condition == "SUCCESS") && (target.Essential || target == d.GameServer) {
				return game.Errorf(game.InvalidRequest, "container %s: a %s dependency cannot be on %s, an essential container", c.Name, dep.Condition, dep.Container)
			}
		}
	}
	if cycle := dependencyCycle(d.Containers(), byName); cycle != "" {
		return game.Errorf(game.InvalidRequest, "the containers' dependencies form a cycle through %s", cycle)
	}
	return checkPortRanges(d.Containers())
}

// dependencyCycle returns the name of a container on a cycle of
// dependencies, or "".
func dependencyCycle(cs []*game.ContainerDefinition, byName map[string]*game.ContainerDefinition) string {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(c *game.ContainerDefinition) string
	visit = func(c *game.ContainerDefinition) string {
		switch state[c.Name] {
		case visiting:
			return c.Name
		case done:
			return ""
		}
		state[c.Name] = visiting
		for _, dep := range c.DependsOn {
			if found := visit(byName[dep.Container]); found != "" {
				return found
			}
		}
		state[c.Name] = done
		return ""
	}
	for _, c := range cs {
		if found := visit(c); found != "" {
			return found
		}
	}
	return ""
}

// checkPortRanges checks that each range runs upwards and that no two
// ranges of one protocol overlap within the group (its containers share
// one network namespace).
func checkPortRanges(cs []*game.ContainerDefinition) error {
	type owned struct {
		r    game.ContainerPortRange
		name string
	}
	var seen []owned
	for _, c := range cs {
		for _, r := range c.PortRanges {
			if r.From > r.To {
				return game.Errorf(game.InvalidRequest, "container %s: port range %d-%d runs downwards", c.Name, r.From, r.To)
			}
			for _, o := range seen {
				if o.r.Protocol == r.Protocol && r.From <= o.r.To && o.r.From <= r.To {
					return game.Errorf(game.InvalidRequest, "container %s: %s port range %d-%d overlaps %d-%d of container %s",
						c.Name, r.Protocol, r.From, r.To, o.r.From, o.r.To, o.name)
				}
			}
			seen = append(seen, owned{r, c.Name})
		}
	}
	return nil
}

// sdkAtLeast reports whether version (MAJOR.MINOR.PATCH, as the model's
// pattern has it) is min or later.
func sdkAtLeast(version string, min [3]int) bool {
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return true
}

func gameServerContainerIn(in *wire.GameServerContainerDefinitionInput) *game.ContainerDefinition {
	if in == nil {
		return nil
	}
	c := &game.ContainerDefinition{
		Name:             *in.ContainerName,
		ImageURI:         *in.ImageUri,
		DependsOn:        dependenciesIn(in.DependsOn),
		MountPoints:      mountPointsIn(in.MountPoints),
		Environment:      environmentIn(in.EnvironmentOverride),
		PortRanges:       portRangesIn(in.PortConfiguration),
		ServerSDKVersion: *in.ServerSdkVersion,
		Essential:        true,
	}
	c.ResolvedImageDigest = imageDigest(c.ImageURI)
	return c
}

func supportContainersIn(in []wire.SupportContainerDefinitionInput) []game.ContainerDefinition {
	out := make([]game.ContainerDefinition, 0, len(in))
	for _, s := range in {
		c := game.ContainerDefinition{
			Name:        *s.ContainerName,
			ImageURI:    *s.ImageUri,
			DependsOn:   dependenciesIn(s.DependsOn),
			MountPoints: mountPointsIn(s.MountPoints),
			Environment: environmentIn(s.EnvironmentOverride),
			PortRanges:  portRangesIn(s.PortConfiguration),
			Essential:   wire.Deref(s.Essential),
			MemoryMiB:   int(wire.Deref(s.MemoryHardLimitMebibytes)),
			Vcpu:        wire.Deref(s.Vcpu),
		}
		if h := s.HealthCheck; h != nil {
			c.HealthCheck = &game.ContainerHealthCheck{Command: h.Command, Interval: int(wire.Deref(h.Interval)),
				Retries: int(wire.Deref(h.Retries)), StartPeriod: int(wire.Deref(h.StartPeriod)), Timeout: int(wire.Deref(h.Timeout))}
		}
		c.ResolvedImageDigest = imageDigest(c.ImageURI)
		out = append(out, c)
	}
	return out
}

// imageDigest is the digest an image reference pins (name@sha256:…), or
// "": Anylift asks no registry, so only a pinned digest is known.
func imageDigest(uri string) string {
	_, digest, ok := strings.Cut(uri, "@")
	if !ok || !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		return ""
	}
	for _, c := range digest[len("sha256:"):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return ""
		}
	}
	return digest
}

func dependenciesIn(in []wire.ContainerDependency) []game.ContainerDependency {
	var out []game.ContainerDependency
	for _, d := range in {
		out = append(out, game.ContainerDependency{Container: *d.ContainerName, Condition: *d.Condition})
	}
	return out
}

func mountPointsIn(in []wire.ContainerMountPoint) []game.ContainerMountPoint {
	var out []game.ContainerMountPoint
	for _, m := range in {
		out = append(out, game.ContainerMountPoint{InstancePath: *m.InstancePath, ContainerPath: wire.Deref(m.ContainerPath), AccessLevel: wire.Deref(m.AccessLevel)})
	}
	return out
}

func environmentIn(in []wire.ContainerEnvironment) []game.ContainerEnv {
	var out []game.ContainerEnv
	for _, e := range in {
		out = append(out, game.ContainerEnv{Name: *e.Name, Value: *e.Value})
	}
	return out
}

func portRangesIn(in *wire.ContainerPortConfiguration) []game.ContainerPortRange {
	if in == nil {
		return nil
	}
	var out []game.ContainerPortRange
	for _, r := range in.ContainerPortRanges {
		out = append(out, game.ContainerPortRange{From: int(*r.FromPort), To: int(*r.ToPort), Protocol: *r.Protocol})
	}
	return out
}

func (s *Service) containerGroupOut(d *game.ContainerGroupDefinition) *wire.ContainerGroupDefinition {
	out := &wire.ContainerGroupDefinition{
		ContainerGroupDefinitionArn: wire.String(s.cfg.Account.ContainerGroupDefinitionARN(d.Name, d.Version)),
		CreationTime:                wire.NewTime(d.CreationTime),
		OperatingSystem:             wire.String(d.OperatingSystem),
		Name:                        wire.String(d.Name),
		ContainerGroupType:          wire.String(d.Type),
		TotalMemoryLimitMebibytes:   wire.Int32(d.TotalMemoryMiB),
		TotalVcpuLimit:              &d.TotalVcpu,
		VersionNumber:               wire.Int32(d.Version),
		VersionDescription:          wire.String(d.VersionDescription),
		Status:                      wire.String(d.Status),
		StatusReason:                wire.String(d.StatusReason),
	}
	if c := d.GameServer; c != nil {
		out.GameServerContainerDefinition = &wire.GameServerContainerDefinition{
			ContainerName:       wire.String(c.Name),
			DependsOn:           dependenciesOut(c.DependsOn),
			MountPoints:         mountPointsOut(c.MountPoints),
			EnvironmentOverride: environmentOut(c.Environment),
			ImageUri:            wire.String(c.ImageURI),
			PortConfiguration:   portRangesOut(c.PortRanges),
			ResolvedImageDigest: wire.String(c.ResolvedImageDigest),
			ServerSdkVersion:    wire.String(c.ServerSDKVersion),
		}
	}
	for _, c := range d.Support {
		sc := wire.SupportContainerDefinition{
			ContainerName:       wire.String(c.Name),
			DependsOn:           dependenciesOut(c.DependsOn),
			MountPoints:         mountPointsOut(c.MountPoints),
			EnvironmentOverride: environmentOut(c.Environment),
			Essential:           wire.Bool(c.Essential),
			ImageUri:            wire.String(c.ImageURI),
			PortConfiguration:   portRangesOut(c.PortRanges),
			ResolvedImageDigest: wire.String(c.ResolvedImageDigest),
		}
		if c.MemoryMiB != 0 {
			sc.MemoryHardLimitMebibytes = wire.Int32(c.MemoryMiB)
		}
		if c.Vcpu != 0 {
			sc.Vcpu = &c.Vcpu
		}
		if h := c.HealthCheck; h != nil {
			sc.HealthCheck = &wire.ContainerHealthCheck{Command: h.Command, Interval: optInt32(h.Interval),
				Retries: optInt32(h.Retries), StartPeriod: optInt32(h.StartPeriod), Timeout: optInt32(h.Timeout)}
		}
		out.SupportContainerDefinitions = append(out.SupportContainerDefinitions, sc)
	}
	return out
}

func dependenciesOut(in []game.ContainerDependency) []wire.ContainerDependency {
	var out []wire.ContainerDependency
	for _, d := range in {
		out = append(out, wire.ContainerDependency{ContainerName: wire.String(d.Container), Condition: wire.String(d.Condition)})
	}
	return out
}

func mountPointsOut(in []game.ContainerMountPoint) []wire.ContainerMountPoint {
	var out []wire.ContainerMountPoint
	for _, m := range in {
		out = append(out, wire.ContainerMountPoint{InstancePath: wire.String(m.InstancePath),
			ContainerPath: wire.String(m.ContainerPath), AccessLevel: wire.String(m.AccessLevel)})
	}
	return out
}

func environmentOut(in []game.ContainerEnv) []wire.ContainerEnvironment {
	var out []wire.ContainerEnvironment
	for _, e := range in {
		out = append(out, wire.ContainerEnvironment{Name: wire.String(e.Name), Value: wire.String(e.Value)})
	}
	return out
}

func portRangesOut(in []game.ContainerPortRange) *wire.ContainerPortConfiguration {
	if len(in) == 0 {
		return nil
	}
	out := &wire.ContainerPortConfiguration{}
	for _, r := range in {
		out.ContainerPortRanges = append(out.ContainerPortRanges,
			wire.ContainerPortRange{FromPort: wire.Int32(r.From), ToPort: wire.Int32(r.To), Protocol: wire.String(r.Protocol)})
	}
	return out
}

// optInt32 is nil for 0.
func optInt32(n int) *int32 {
	if n == 0 {
		return nil
	}
	return wire.Int32(n)
}
