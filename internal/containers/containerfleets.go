package containers

import (
	"context"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Container fleets are fleets (game.Fleet, ComputeType CONTAINER) in the
// home region: game sessions, queues, search, aliases and metrics treat
// them as any fleet. Their computes are their game server container
// groups, registered by whatever runs them (RegisterContainerCompute);
// their capacity is a wanted number of instances, each running
// GroupsPerInstance game server container groups.

// firstConnectionPort is where a fleet's connection ports start when the
// request does not say (GameLift's default).
const firstConnectionPort = 4192

// CreateContainerFleet creates a container fleet: ACTIVE with one instance
// wanted when it has a game server container group, CREATED (running
// nothing) without one.
func (s *Service) CreateContainerFleet(ctx context.Context, in *wire.CreateContainerFleetInput) (*wire.CreateContainerFleetOutput, error) {
	for _, l := range in.Locations {
		if loc := wire.Deref(l.Location); loc != s.cfg.Account.Region {
			return nil, game.Errorf(game.InvalidRequest, "Locations: %s: Anylift runs container fleets in its home region %s only", loc, s.cfg.Account.Region)
		}
	}
	id := game.NewContainerFleetID()
	f := &game.Fleet{
		ID:                             id,
		ARN:                            s.cfg.Account.FleetARN(id),
		Description:                    wire.Deref(in.Description),
		Status:                         game.FleetCreated,
		CreationTime:                   s.clock(),
		ComputeType:                    game.ComputeContainer,
		Locations:                      []string{s.cfg.Account.Region},
		NewGameSessionProtectionPolicy: game.NoProtection,
		MetricGroups:                   []string{defaultMetricGroup},
		Capacity:                       []game.LocationCapacity{{Location: s.cfg.Account.Region, Desired: 1, Max: 1}},
		Container: &game.ContainerFleet{
			RoleARN:           *in.FleetRoleArn,
			GroupsPerInstance: int(wire.Deref(in.GameServerContainerGroupsPerInstance)),
			InstanceType:      wire.Deref(in.InstanceType),
			BillingType:       wire.Deref(in.BillingType),
		},
	}
	f.Name = f.ID // GameLift's container fleets have no name of their own
	c := f.Container
	if c.GroupsPerInstance == 0 {
		c.GroupsPerInstance = 1
	}
	if c.BillingType == "" {
		c.BillingType = wire.ContainerFleetBillingTypeOnDemand
	}
	c.InboundPermissions = permissionsIn(in.InstanceInboundPermissions)
	applyContainerFleetAttributes(f, in.NewGameSessionProtectionPolicy, in.GameSessionCreationLimitPolicy, in.MetricGroups, in.LogConfiguration)
	err := s.update(ctx, func(tx store.Tx) error {
		gs, pi, err := s.fleetGroups(tx, in.GameServerContainerGroupDefinitionName, in.PerInstanceContainerGroupDefinitionName, c)
		if err != nil {
			return err
		}
		if err := setConnectionPorts(c, in.InstanceConnectionPortRange, gs, pi); err != nil {
			return err
		}
		if gs != nil {
			f.Status = game.FleetActive
		}
		if err := s.ctl.InsertFleet(tx, f, in.Tags); err != nil {
			return err
		}
		return s.recordFleetState(tx, f)
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateContainerFleetOutput{ContainerFleet: s.containerFleetOut(f)}, nil
}

// recordFleetState records the event of f's status.
func (s *Service) recordFleetState(tx store.Tx, f *game.Fleet) error {
	code := wire.EventCodeFleetStateActive
	if f.Status == game.FleetCreated {
		code = wire.EventCodeFleetStateCreated
	}
	return s.ctl.RecordEvent(tx, f.ID, "", code, fmt.Sprintf("Fleet %s changed status to %s.", f.ID, f.Status))
}

// fleetGroups resolves the definitions a container fleet is to run (nil
// for a reference not given, the fleet's current one when it has one) and
// records them in c.
func (s *Service) fleetGroups(tx store.Tx, gsRef, piRef *string, c *game.ContainerFleet) (gs, pi *game.ContainerGroupDefinition, err error) {
	if gs, err = s.fleetGroup(tx, gsRef, &c.GameServerGroup, game.ContainerGroupGameServer, "GameServerContainerGroupDefinitionName"); err != nil {
		return nil, nil, err
	}
	if pi, err = s.fleetGroup(tx, piRef, &c.PerInstanceGroup, game.ContainerGroupPerInstance, "PerInstanceContainerGroupDefinitionName"); err != nil {
		return nil, nil, err
	}
	return gs, pi, nil
}

// fleetGroup resolves ref (a name: the latest version; an ARN may name a
// version) into use, or reads use's current definition when ref is nil.
// The definition must be of type typ.
func (s *Service) fleetGroup(tx store.Tx, ref *string, use *game.ContainerGroupUse, typ, member string) (*game.ContainerGroupDefinition, error) {
	if ref == nil {
		if use.Name == "" {
			return nil, nil
		}
		return tx.GetContainerGroup(use.Name, use.Version)
	}
	name, v, ok := game.ContainerGroupRef(*ref)
	if !ok {
		return nil, game.Errorf(game.InvalidRequest, "%s %s: the version after the last ':' must be a positive number", member, *ref)
	}
	d, err := tx.GetContainerGroup(name, v)
	if game.IsKind(err, game.NotFound) {
		return nil, game.Errorf(game.InvalidRequest, "%s: %s", member, err.Error())
	}
	if err != nil {
		return nil, err
	}
	if d.Type != typ {
		return nil, game.Errorf(game.InvalidRequest, "%s: container group definition %s is %s, not %s", member, name, d.Type, typ)
	}
	if d.Status != game.ContainerGroupReady {
		return nil, game.Errorf(game.InvalidRequest, "%s: container group definition %s version %d is %s, not READY", member, name, d.Version, d.Status)
	}
	*use = game.ContainerGroupUse{Name: d.Name, Version: d.Version}
	return d, nil
}

// portsOf counts the container ports of a group's containers.
func portsOf(d *game.ContainerGroupDefinition) int {
	if d == nil {
		return 0
	}
	n := 0
	for _, c := range d.Containers() {
		for _, r := range c.PortRanges {
			n += r.To - r.From + 1
		}
	}
	return n
}

// setConnectionPorts sets c's connection port range: the one asked for,
// else the one asked for before, else (as GameLift calculates it) from
// 4192 with as many ports as an instance needs; checking it holds a
// connection port for every container port of every group an instance
// runs.
func setConnectionPorts(c *game.ContainerFleet, asked *wire.ConnectionPortRange, gs, pi *game.ContainerGroupDefinition) error {
	need := portsOf(gs)*c.GroupsPerInstance + portsOf(pi)
	switch {
	case asked != nil:
		c.PortFrom, c.PortTo, c.PortsSet = int(*asked.FromPort), int(*asked.ToPort), true
		if c.PortFrom > c.PortTo {
			return game.Errorf(game.InvalidRequest, "InstanceConnectionPortRange %d-%d runs downwards", c.PortFrom, c.PortTo)
		}
	case !c.PortsSet:
		c.PortFrom, c.PortTo = firstConnectionPort, firstConnectionPort+max(need, 1)-1
	}
	if have := c.PortTo - c.PortFrom + 1; have < need {
		return game.Errorf(game.InvalidRequest, "InstanceConnectionPortRange %d-%d has %d ports; an instance needs %d "+
			"(%d for each of its %d game server container groups, %d for its per-instance group)",
			c.PortFrom, c.PortTo, have, need, portsOf(gs), c.GroupsPerInstance, portsOf(pi))
	}
	if c.PortTo > 60000 {
		return game.Errorf(game.InvalidRequest, "an instance needs %d connection ports from %d, past the highest, 60000: set InstanceConnectionPortRange", need, c.PortFrom)
	}
	return nil
}

// applyContainerFleetAttributes sets the attributes given (non-nil) on f.
func applyContainerFleetAttributes(f *game.Fleet, protection *string, limit *wire.GameSessionCreationLimitPolicy, groups []string, logs *wire.LogConfiguration) {
	var rl *wire.ResourceCreationLimitPolicy
	if limit != nil {
		rl = &wire.ResourceCreationLimitPolicy{NewGameSessionsPerCreator: limit.NewGameSessionsPerCreator, PolicyPeriodInMinutes: limit.PolicyPeriodInMinutes}
	}
	wire.ApplyFleetAttributes(f, protection, rl, groups)
	if logs != nil {
		f.Container.LogDestination = wire.Deref(logs.LogDestination)
		f.Container.LogGroupARN = wire.Deref(logs.LogGroupArn)
		f.Container.LogBucket = wire.Deref(logs.S3BucketName)
	}
}

func permissionsIn(in []wire.IpPermission) []game.IPPermission {
	var out []game.IPPermission
	for _, p := range in {
		out = append(out, game.IPPermission{From: int(*p.FromPort), To: int(*p.ToPort), IPRange: *p.IpRange, Protocol: *p.Protocol})
	}
	return out
}

// getContainerFleet reads a container fleet by id or ARN; InvalidRequest
// for a fleet of another kind.
func getContainerFleet(tx store.Tx, idOrARN string) (*game.Fleet, error) {
	f, err := tx.GetFleet(game.ResourceID(idOrARN, "fleet"))
	if err != nil {
		return nil, err
	}
	if f.Container == nil {
		return nil, game.Errorf(game.InvalidRequest, "fleet %s is an %s fleet, not a container fleet", f.ID, f.ComputeType)
	}
	return f, nil
}

// DescribeContainerFleet returns a container fleet.
func (s *Service) DescribeContainerFleet(ctx context.Context, in *wire.DescribeContainerFleetInput) (*wire.DescribeContainerFleetOutput, error) {
	var f *game.Fleet
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		f, err = getContainerFleet(tx, *in.FleetId)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeContainerFleetOutput{ContainerFleet: s.containerFleetOut(f)}, nil
}

// ListContainerFleets lists container fleets in creation order, those that
// run a definition when one is named (a name: any of its versions; an ARN
// with a version: that version).
func (s *Service) ListContainerFleets(ctx context.Context, in *wire.ListContainerFleetsInput) (*wire.ListContainerFleetsOutput, error) {
	var name string
	var version int
	if in.ContainerGroupDefinitionName != nil {
		var ok bool
		if name, version, ok = game.ContainerGroupRef(*in.ContainerGroupDefinitionName); !ok {
			return nil, game.Errorf(game.InvalidRequest, "ContainerGroupDefinitionName %s: the version after the last ':' must be a positive number", *in.ContainerGroupDefinitionName)
		}
	}
	out := &wire.ListContainerFleetsOutput{ContainerFleets: []wire.ContainerFleet{}}
	err := s.view(ctx, func(tx store.Tx) error {
		list, next, err := tx.ListContainerFleets(name, version, store.RequestPage(in.Limit, in.NextToken))
		for _, f := range list {
			out.ContainerFleets = append(out.ContainerFleets, *s.containerFleetOut(f))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// UpdateContainerFleet changes the members given. A new game server
// container group definition makes a CREATED fleet ACTIVE; the game
// server group cannot be removed, the per-instance one can
// (RemoveAttributes).
func (s *Service) UpdateContainerFleet(ctx context.Context, in *wire.UpdateContainerFleetInput) (*wire.UpdateContainerFleetOutput, error) {
	removePerInstance := false
	for _, a := range in.RemoveAttributes {
		removePerInstance = removePerInstance || a == wire.ContainerFleetRemoveAttributePerInstanceContainerGroupDefinition
	}
	if removePerInstance && in.PerInstanceContainerGroupDefinitionName != nil {
		return nil, game.Errorf(game.InvalidRequest, "PerInstanceContainerGroupDefinitionName cannot be set and removed at once")
	}
	var f *game.Fleet
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if f, err = getContainerFleet(tx, *in.FleetId); err != nil {
			return err
		}
		c := f.Container
		if removePerInstance {
			c.PerInstanceGroup = game.ContainerGroupUse{}
		}
		if in.GameServerContainerGroupsPerInstance != nil {
			c.GroupsPerInstance = int(*in.GameServerContainerGroupsPerInstance)
		}
		gs, pi, err := s.fleetGroups(tx, in.GameServerContainerGroupDefinitionName, in.PerInstanceContainerGroupDefinitionName, c)
		if err != nil {
			return err
		}
		if err := setConnectionPorts(c, in.InstanceConnectionPortRange, gs, pi); err != nil {
			return err
		}
		c.InboundPermissions = revokePermissions(c.InboundPermissions, permissionsIn(in.InstanceInboundPermissionRevocations))
		c.InboundPermissions = append(c.InboundPermissions, revokePermissions(permissionsIn(in.InstanceInboundPermissionAuthorizations), c.InboundPermissions)...)
		if in.Description != nil {
			f.Description = *in.Description
		}
		oldPolicy := f.NewGameSessionProtectionPolicy
		applyContainerFleetAttributes(f, in.NewGameSessionProtectionPolicy, in.GameSessionCreationLimitPolicy, in.MetricGroups, in.LogConfiguration)
		activated := f.Status == game.FleetCreated && gs != nil
		if activated {
			f.Status = game.FleetActive
		}
		if err := tx.UpdateFleet(f); err != nil {
			return err
		}
		if activated {
			if err := s.recordFleetState(tx, f); err != nil {
				return err
			}
		}
		return s.ctl.ProtectionChanged(tx, f, oldPolicy)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateContainerFleetOutput{ContainerFleet: s.containerFleetOut(f)}, nil
}

// revokePermissions returns list without the permissions in gone.
func revokePermissions(list, gone []game.IPPermission) []game.IPPermission {
	var out []game.IPPermission
next:
	for _, p := range list {
		for _, g := range gone {
			if p == g {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// DeleteContainerFleet deletes a container fleet as DeleteFleet does.
func (s *Service) DeleteContainerFleet(ctx context.Context, in *wire.DeleteContainerFleetInput) (*wire.DeleteContainerFleetOutput, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := getContainerFleet(tx, *in.FleetId)
		if err != nil {
			return err
		}
		return s.ctl.RemoveFleet(tx, f)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeleteContainerFleetOutput{}, nil
}

// UpdateFleetCapacity sets a container fleet's wanted number of instances
// in a location (the home region when none is given), with its bounds:
// the members given change, and MinSize <= DesiredInstances <= MaxSize
// must hold after. A change records FLEET_SCALING_EVENT.
func (s *Service) UpdateFleetCapacity(ctx context.Context, in *wire.UpdateFleetCapacityInput) (*wire.UpdateFleetCapacityOutput, error) {
	location := wire.Deref(in.Location)
	if location == "" {
		location = s.cfg.Account.Region
	}
	var f *game.Fleet
	changed := false
	err := s.update(ctx, func(tx store.Tx) error {
		changed = false
		var err error
		if f, err = tx.GetFleet(game.ResourceID(*in.FleetId, "fleet")); err != nil {
			return err
		}
		if f.Container == nil {
			return game.Errorf(game.InvalidRequest, "fleet %s is an %s fleet: its capacity is the computes registered to it", f.ID, f.ComputeType)
		}
		old, ok := f.CapacityIn(location)
		if !ok {
			return game.Errorf(game.InvalidRequest, "fleet %s has no location %s", f.ID, location)
		}
		c := old
		if in.DesiredInstances != nil {
			c.Desired = int(*in.DesiredInstances)
		}
		if in.MinSize != nil {
			c.Min = int(*in.MinSize)
		}
		if in.MaxSize != nil {
			c.Max = int(*in.MaxSize)
		}
		if c.Min > c.Max {
			return game.Errorf(game.InvalidRequest, "MinSize %d is more than MaxSize %d", c.Min, c.Max)
		}
		if c.Desired < c.Min || c.Desired > c.Max {
			return game.Errorf(game.InvalidRequest, "DesiredInstances %d is outside MinSize %d and MaxSize %d", c.Desired, c.Min, c.Max)
		}
		if c == old {
			return nil
		}
		f.SetCapacity(c)
		if err := tx.UpdateFleet(f); err != nil {
			return err
		}
		changed = true
		return s.ctl.RecordEvent(tx, f.ID, "", wire.EventCodeFleetScalingEvent,
			fmt.Sprintf("Fleet %s capacity in %s changed: desired %d (was %d), minimum %d (was %d), maximum %d (was %d).",
				f.ID, location, c.Desired, old.Desired, c.Min, old.Min, c.Max, old.Max))
	})
	if err != nil {
		return nil, err
	}
	if changed {
		s.capacityChanged()
	}
	return &wire.UpdateFleetCapacityOutput{FleetId: wire.String(f.ID), FleetArn: wire.String(f.ARN), Location: wire.String(location)}, nil
}

func (s *Service) containerFleetOut(f *game.Fleet) *wire.ContainerFleet {
	c := f.Container
	out := &wire.ContainerFleet{
		FleetId:                              wire.String(f.ID),
		FleetArn:                             wire.String(f.ARN),
		FleetRoleArn:                         wire.String(c.RoleARN),
		InstanceConnectionPortRange:          &wire.ConnectionPortRange{FromPort: wire.Int32(c.PortFrom), ToPort: wire.Int32(c.PortTo)},
		GameServerContainerGroupsPerInstance: wire.Int32(c.GroupsPerInstance),
		MaximumGameServerContainerGroupsPerInstance: wire.Int32(c.GroupsPerInstance),
		InstanceType:                   wire.String(c.InstanceType),
		BillingType:                    wire.String(c.BillingType),
		Description:                    wire.String(f.Description),
		CreationTime:                   wire.NewTime(f.CreationTime),
		MetricGroups:                   append([]string{}, f.MetricGroups...),
		NewGameSessionProtectionPolicy: wire.String(f.NewGameSessionProtectionPolicy),
		GameSessionCreationLimitPolicy: &wire.GameSessionCreationLimitPolicy{
			NewGameSessionsPerCreator: wire.Int32(f.CreationLimit.NewGameSessionsPerCreator),
			PolicyPeriodInMinutes:     wire.Int32(f.CreationLimit.PolicyPeriodInMinutes),
		},
		Status: wire.String(f.Status),
	}
	if g := c.GameServerGroup; g.Name != "" {
		out.GameServerContainerGroupDefinitionName = wire.String(g.Name)
		out.GameServerContainerGroupDefinitionArn = wire.String(s.cfg.Account.ContainerGroupDefinitionARN(g.Name, g.Version))
	}
	if g := c.PerInstanceGroup; g.Name != "" {
		out.PerInstanceContainerGroupDefinitionName = wire.String(g.Name)
		out.PerInstanceContainerGroupDefinitionArn = wire.String(s.cfg.Account.ContainerGroupDefinitionARN(g.Name, g.Version))
	}
	for _, p := range c.InboundPermissions {
		out.InstanceInboundPermissions = append(out.InstanceInboundPermissions, wire.IpPermission{
			FromPort: wire.Int32(p.From), ToPort: wire.Int32(p.To), IpRange: wire.String(p.IPRange), Protocol: wire.String(p.Protocol)})
	}
	if c.LogDestination != "" || c.LogGroupARN != "" || c.LogBucket != "" {
		out.LogConfiguration = &wire.LogConfiguration{LogDestination: wire.String(c.LogDestination),
			LogGroupArn: wire.String(c.LogGroupARN), S3BucketName: wire.String(c.LogBucket)}
	}
	for _, l := range f.Locations {
		out.LocationAttributes = append(out.LocationAttributes, wire.ContainerFleetLocationAttributes{
			Location: wire.String(l), Status: wire.String(f.Status)})
	}
	return out
}

// FleetCapacity is a container fleet's capacity in location: the
// instances wanted, and the instances and game server container groups
// (its computes) there, by state. A group is ACTIVE while it hosts a live
// game session, IDLE while it is ACTIVE and hosts none; an instance is
// ACTIVE when one of its groups is, and IDLE when none of those hosts a
// session.
func (s *Service) FleetCapacity(tx store.Tx, f *game.Fleet, location string) (wire.FleetCapacity, error) {
	busy, err := tx.BusyComputes(f.ID)
	if err != nil {
		return wire.FleetCapacity{}, err
	}
	type instance struct{ active, pending, busy, terminating int }
	instances := map[string]*instance{}
	var groups wire.GameServerContainerGroupCounts
	var pending, active, idle, terminating int
	page := store.Page{Limit: 1000}
	for {
		list, next, err := tx.ListComputes(f.ID, store.ComputeFilter{Location: location}, page)
		if err != nil {
			return wire.FleetCapacity{}, err
		}
		for _, c := range list {
			key := c.InstanceID
			if key == "" {
				key = c.Name
			}
			in := instances[key]
			if in == nil {
				in = &instance{}
				instances[key] = in
			}
			switch c.Status {
			case game.ComputeActive:
				in.active++
				if busy[c.Name] {
					in.busy++
					active++
				} else {
					idle++
				}
			case game.ComputePending:
				in.pending++
				pending++
			case game.ComputeTerminating:
				in.terminating++
				terminating++
			}
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	groups = wire.GameServerContainerGroupCounts{PENDING: wire.Int32(pending), ACTIVE: wire.Int32(active),
		IDLE: wire.Int32(idle), TERMINATING: wire.Int32(terminating)}
	var ip, ia, ii, it int
	for _, in := range instances {
		switch {
		case in.active > 0:
			ia++
			if in.busy == 0 {
				ii++
			}
		case in.pending > 0:
			ip++
		case in.terminating > 0:
			it++
		}
	}
	want, _ := f.CapacityIn(location)
	return wire.FleetCapacity{
		FleetId:  wire.String(f.ID),
		FleetArn: wire.String(f.ARN),
		InstanceCounts: &wire.EC2InstanceCounts{
			DESIRED: wire.Int32(want.Desired), MINIMUM: wire.Int32(want.Min), MAXIMUM: wire.Int32(want.Max),
			PENDING: wire.Int32(ip), ACTIVE: wire.Int32(ia), IDLE: wire.Int32(ii), TERMINATING: wire.Int32(it),
		},
		Location:                       wire.String(location),
		GameServerContainerGroupCounts: &groups,
	}, nil
}

// A container compute's auth token lives as long as the compute: it is
// handed to the game server container group in its environment when the
// group is created, may be used whenever its containers (re)start, and
// goes with the compute when the group is removed.
var containerTokenExpiry = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// ContainerCompute is a game server container group of a container fleet,
// as whatever runs it registers it.
type ContainerCompute struct {
	FleetID, Name string
	InstanceID    string
	Ports         []game.PortMapping
}

// RegisterContainerCompute registers a game server container group that is
// about to start, as a PENDING compute in the home region, and returns an
// auth token for its game server. Registering a name again mints another
// token. InvalidRequest when the fleet is not an ACTIVE container fleet.
func (s *Service) RegisterContainerCompute(ctx context.Context, cc ContainerCompute) (token string, err error) {
	secret, hash := s.computes.NewToken()
	err = s.update(ctx, func(tx store.Tx) error {
		f, err := getContainerFleet(tx, cc.FleetID)
		if err != nil {
			return err
		}
		name := cc.Name
		if f.Status != game.FleetActive {
			return game.Errorf(game.InvalidRequest, "fleet %s is %s; game server container groups run only on an ACTIVE fleet", f.ID, f.Status)
		}
		_, err = tx.GetCompute(f.ID, name)
		if game.IsKind(err, game.NotFound) {
			err = tx.InsertCompute(&game.Compute{FleetID: f.ID, Name: name, ARN: s.cfg.Account.ComputeARN(name),
				Location: s.cfg.Account.Region, Status: game.ComputePending, CreationTime: s.clock(), InstanceID: cc.InstanceID, Ports: cc.Ports})
		}
		if err != nil {
			return err
		}
		return tx.InsertAuthToken(&game.AuthToken{Hash: hash, FleetID: f.ID, ComputeName: name,
			Created: s.clock(), Expires: containerTokenExpiry})
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// ContainerComputeRunning records that a game server container group
// runs, reachable at ip: its compute becomes ACTIVE.
func (s *Service) ContainerComputeRunning(ctx context.Context, fleetID, name, ip string) error {
	return s.update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCompute(fleetID, name)
		if err != nil {
			return err
		}
		if (c.Status == game.ComputeActive && c.IPAddress == ip) || c.Status == game.ComputeTerminating {
			return nil // a group being removed stays so
		}
		c.Status, c.IPAddress = game.ComputeActive, ip
		return tx.UpdateCompute(c)
	})
}

// RemoveContainerCompute deregisters a game server container group that
// has stopped: the sessions it hosted end, its auth tokens go. A compute
// already gone is not an error.
func (s *Service) RemoveContainerCompute(ctx context.Context, fleetID, name string) error {
	err := s.update(ctx, func(tx store.Tx) error { return s.computes.Deregister(tx, fleetID, name) })
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	return err
}

// DescribeContainerGroupPortMappings returns the connection ports the
// container ports of a game server container group (a compute of a
// container fleet) are reached at, for one container when ContainerName
// is given. Per-instance container groups are not run by Anylift.
func (s *Service) DescribeContainerGroupPortMappings(ctx context.Context, in *wire.DescribeContainerGroupPortMappingsInput) (*wire.DescribeContainerGroupPortMappingsOutput, error) {
	if *in.ContainerGroupType != game.ContainerGroupGameServer {
		return nil, game.Errorf(game.InvalidRequest, "ContainerGroupType %s: Anylift runs no per-instance container groups", *in.ContainerGroupType)
	}
	if in.ComputeName == nil {
		return nil, game.Errorf(game.InvalidRequest, "ComputeName is required when ContainerGroupType is GAME_SERVER")
	}
	var out *wire.DescribeContainerGroupPortMappingsOutput
	err := s.view(ctx, func(tx store.Tx) error {
		f, err := getContainerFleet(tx, *in.FleetId)
		if err != nil {
			return err
		}
		c, err := tx.GetCompute(f.ID, game.ResourceID(*in.ComputeName, "compute"))
		if err != nil {
			return err
		}
		if in.InstanceId != nil && *in.InstanceId != c.InstanceID {
			return game.Errorf(game.InvalidRequest, "compute %s runs on instance %s, not %s", c.Name, c.InstanceID, *in.InstanceId)
		}
		out = &wire.DescribeContainerGroupPortMappingsOutput{
			FleetId: wire.String(f.ID), Location: wire.String(c.Location), ContainerGroupType: in.ContainerGroupType,
			ComputeName: wire.String(c.Name), InstanceId: wire.String(c.InstanceID),
			ContainerGroupPortMappings: []wire.ContainerGroupPortMapping{},
		}
		if g := f.Container.GameServerGroup; g.Name != "" {
			out.ContainerGroupDefinitionArn = wire.String(s.cfg.Account.ContainerGroupDefinitionARN(g.Name, g.Version))
		}
		byContainer := map[string]int{}
		for _, m := range c.Ports {
			if in.ContainerName != nil && *in.ContainerName != m.Container {
				continue
			}
			i, ok := byContainer[m.Container]
			if !ok {
				i = len(out.ContainerGroupPortMappings)
				byContainer[m.Container] = i
				out.ContainerGroupPortMappings = append(out.ContainerGroupPortMappings, wire.ContainerGroupPortMapping{ContainerName: wire.String(m.Container)})
			}
			pm := &out.ContainerGroupPortMappings[i]
			pm.ContainerPortMappings = append(pm.ContainerPortMappings, wire.ContainerPortMapping{
				ContainerPort: wire.Int32(m.ContainerPort), ConnectionPort: wire.Int32(m.ConnectionPort), Protocol: wire.String(m.Protocol)})
		}
		if in.ContainerName != nil && len(out.ContainerGroupPortMappings) == 0 {
			return game.Errorf(game.NotFound, "compute %s has no container %s with ports", c.Name, *in.ContainerName)
		}
		return nil
	})
	return out, err
}

// ContainerFleetRun is what a container fleet is to run and what it has:
// its game server container group definition at the fleet's version, its
// computes (the groups registered) by name, and those hosting a live
// game session.
type ContainerFleetRun struct {
	Fleet      *game.Fleet
	GameServer *game.ContainerGroupDefinition
	Computes   map[string]*game.Compute
	Busy       map[string]bool
	// Unprotected holds the busy groups a scale-down may remove, when the
	// fleet has more groups than it wants: every game session they host
	// is ACTIVE and has no protection (TerminateContainerGroup).
	Unprotected map[string]bool
}

// ContainerFleetRuns returns every container fleet that runs game server
// container groups now: the ACTIVE ones with a game server container
// group definition.
func (s *Service) ContainerFleetRuns(ctx context.Context) ([]*ContainerFleetRun, error) {
	var out []*ContainerFleetRun
	err := s.view(ctx, func(tx store.Tx) error {
		out = nil
		page := store.Page{Limit: 1000}
		for {
			list, next, err := tx.ListContainerFleets("", 0, page)
			if err != nil {
				return err
			}
			for _, f := range list {
				g := f.Container.GameServerGroup
				if f.Status != game.FleetActive || g.Name == "" {
					continue
				}
				run := &ContainerFleetRun{Fleet: f, Computes: map[string]*game.Compute{}}
				if run.GameServer, err = tx.GetContainerGroup(g.Name, g.Version); err != nil {
					return err
				}
				if run.Busy, err = tx.BusyComputes(f.ID); err != nil {
					return err
				}
				if err := eachCompute(tx, f.ID, func(c *game.Compute) { run.Computes[c.Name] = c }); err != nil {
					return err
				}
				want := 0
				for _, c := range f.Capacity {
					want += c.Desired
				}
				if len(run.Computes) > want*max(f.Container.GroupsPerInstance, 1) && len(run.Busy) > 0 {
					live, err := tx.LiveGameSessions(f.ID, "")
					if err != nil {
						return err
					}
					run.Unprotected = unprotectedComputes(live)
				}
				out = append(out, run)
			}
			if next == "" {
				return nil
			}
			page.Token = next
		}
	})
	return out, err
}

// unprotectedComputes returns the computes hosting live game sessions
// that are all ACTIVE without protection, of the live sessions given.
func unprotectedComputes(live []*game.GameSession) map[string]bool {
	out := map[string]bool{}
	for _, gs := range live {
		ok, seen := out[gs.ComputeName]
		out[gs.ComputeName] = (ok || !seen) && scaleDownMayEnd(gs)
	}
	for name, ok := range out {
		if !ok {
			delete(out, name)
		}
	}
	return out
}

// scaleDownMayEnd reports whether a scale-down may end a live game
// session: an ACTIVE one without protection (FullProtection keeps an
// ACTIVE session from scale-down; one still ACTIVATING, or TERMINATING,
// is left to finish).
func scaleDownMayEnd(gs *game.GameSession) bool {
	return gs.Status == game.SessionActive && protection(gs.ProtectionPolicy) == game.NoProtection
}

// ContainerFleetStopped reports whether a container fleet runs no game
// server container groups now (ContainerFleetRuns would not list it): it
// is gone, not ACTIVE, or has no game server container group definition.
func (s *Service) ContainerFleetStopped(ctx context.Context, fleetID string) (stopped bool, err error) {
	err = s.view(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(fleetID)
		if game.IsKind(err, game.NotFound) {
			stopped = true
			return nil
		}
		if err != nil {
			return err
		}
		stopped = f.Container == nil || f.Status != game.FleetActive || f.Container.GameServerGroup.Name == ""
		return nil
	})
	return stopped, err
}

// ContainerComputeKnown reports whether a fleet has a compute of that name
// now.
func (s *Service) ContainerComputeKnown(ctx context.Context, fleetID, name string) (known bool, err error) {
	err = s.view(ctx, func(tx store.Tx) error {
		_, err := tx.GetCompute(fleetID, name)
		known = err == nil
		if game.IsKind(err, game.NotFound) {
			return nil
		}
		return err
	})
	return known, err
}

// eachCompute calls fn with every compute of a fleet.
func eachCompute(tx store.Tx, fleetID string, fn func(*game.Compute)) error {
	page := store.Page{Limit: 1000}
	for {
		list, next, err := tx.ListComputes(fleetID, store.ComputeFilter{}, page)
		if err != nil {
			return err
		}
		for _, c := range list {
			fn(c)
		}
		if next == "" {
			return nil
		}
		page.Token = next
	}
}

// RemoveIdleContainerCompute deregisters a game server container group
// unless it hosts a live game session, in one transaction, so that no
// session is placed on a group being removed; removed says whether it
// went. A compute already gone counts as removed.
func (s *Service) RemoveIdleContainerCompute(ctx context.Context, fleetID, name string) (removed bool, err error) {
	err = s.update(ctx, func(tx store.Tx) error {
		removed, err = s.removeIfIdle(tx, fleetID, name)
		return err
	})
	return removed, err
}

// removeIfIdle deregisters the group inside tx unless it hosts a live
// game session, and reports whether it went (gone already counts).
func (s *Service) removeIfIdle(tx store.Tx, fleetID, name string) (bool, error) {
	live, err := tx.LiveGameSessions(fleetID, name)
	if err != nil || len(live) > 0 {
		return false, err
	}
	if err := s.computes.Deregister(tx, fleetID, name); err != nil && !game.IsKind(err, game.NotFound) {
		return false, err
	}
	return true, nil
}

// TerminateContainerGroup starts removing a game server container group
// that a scale-down removes although it hosts game sessions, which
// GameLift's rules allow when every one of them is ACTIVE without
// protection (NoProtection). In one transaction it checks that they still
// are (leaving is false otherwise: the group stays), marks the group
// TERMINATING with its termination time (TerminationWait from now), and
// moves its sessions to TERMINATING (INTERRUPTED); after the commit its
// server processes are sent TerminateProcess with that time, as GameLift
// calls onProcessTerminate. The group is removed by
// FinishContainerGroup once they have ended, or at that time. A group
// already TERMINATING, or gone, counts as leaving.
func (s *Service) TerminateContainerGroup(ctx context.Context, fleetID, name string) (leaving bool, err error) {
	var told []*game.Process
	var at time.Time
	err = s.update(ctx, func(tx store.Tx) error {
		leaving, told = false, nil
		live, err := tx.LiveGameSessions(fleetID, name)
		if err != nil {
			return err
		}
		for _, gs := range live {
			if !scaleDownMayEnd(gs) {
				return nil
			}
		}
		c, err := tx.GetCompute(fleetID, name)
		if game.IsKind(err, game.NotFound) {
			leaving = true
			return nil
		} else if err != nil {
			return err
		}
		if c.Status == game.ComputeTerminating {
			leaving = true
			return nil
		}
		at = s.clock().Add(s.cfg.TerminationWait)
		c.Status, c.TerminationTime = game.ComputeTerminating, at
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		if told, err = s.procs.TerminateCompute(tx, fleetID, name); err != nil {
			return err
		}
		leaving = true
		return nil
	})
	if err != nil {
		return false, err
	}
	s.procs.TellTerminate(told, at)
	return leaving, nil
}

// FinishContainerGroup removes a TERMINATING game server container group
// (TerminateContainerGroup) once its server processes have ended their
// game sessions (ProcessEnding) or gone (their connections closed), or
// once its termination time has come, whatever they do: then a process
// still hosting a session ends with SERVER_PROCESS_FORCE_TERMINATED, as
// GameLift's does when it has not ended five minutes after
// onProcessTerminate. The sessions left end TERMINATED (INTERRUPTED) and
// the group is deregistered; done says whether it was (a group gone
// counts as done), after which its pod may go.
func (s *Service) FinishContainerGroup(ctx context.Context, fleetID, name string) (done bool, err error) {
	// Read first: a group still waiting (the usual answer, asked at
	// every pass of the controller) costs no write.
	waiting := false
	err = s.view(ctx, func(tx store.Tx) error {
		c, err := tx.GetCompute(fleetID, name)
		if err != nil || c.Status != game.ComputeTerminating || !s.clock().Before(c.TerminationTime) {
			return err
		}
		settled, err := s.procs.ComputeSettled(tx, c)
		waiting = !settled
		return err
	})
	if game.IsKind(err, game.NotFound) {
		return true, nil
	}
	if err != nil || waiting {
		return false, err
	}
	var ended []*game.Process
	err = s.update(ctx, func(tx store.Tx) error {
		done, ended = false, nil
		c, err := tx.GetCompute(fleetID, name)
		if game.IsKind(err, game.NotFound) {
			done = true
			return nil
		} else if err != nil || c.Status != game.ComputeTerminating {
			return err
		}
		ended, done, err = s.procs.FinishCompute(tx, c, !s.clock().Before(c.TerminationTime))
		return err
	})
	if err != nil {
		return false, err
	}
	s.procs.ProcessesEnded(ended)
	return done, nil
}

// RecycleContainerGroup recycles a game server container group whose node
// is being taken out of service ahead of time (cordoned, or marked by an
// autoscaler for removal), as GameLift recycles an instance at risk of
// interruption once it has no active game session: the first time, it
// records INSTANCE_RECYCLED for the group's instance with message and
// marks the group recycled, so that it takes no new server process; and
// whenever it hosts no live game session, it deregisters it (removed:
// its pod may go, and is replaced). A group gone counts as removed; one
// TERMINATING is left to its end.
func (s *Service) RecycleContainerGroup(ctx context.Context, fleetID, name, message string) (removed bool, err error) {
	err = s.update(ctx, func(tx store.Tx) error {
		removed = false
		c, err := tx.GetCompute(fleetID, name)
		if game.IsKind(err, game.NotFound) {
			removed = true
			return nil
		} else if err != nil || c.Status == game.ComputeTerminating {
			return err
		}
		if c.RecycleTime.IsZero() {
			if err := s.ctl.RecordEvent(tx, fleetID, c.InstanceID, wire.EventCodeInstanceRecycled, message); err != nil {
				return err
			}
			c.RecycleTime = s.clock()
			if err := tx.UpdateCompute(c); err != nil {
				return err
			}
		}
		removed, err = s.removeIfIdle(tx, fleetID, name)
		return err
	})
	return removed, err
}

// ContainerGroupStopped records why a game server container group stopped,
// or is being taken away by its cluster (the event code and message the
// caller chose), ends what is left of its server processes (a node cut off
// from its cluster may still reach Anylift: nothing more is placed there)
// and deregisters it: the sessions it hosted end, its auth tokens go. An
// INSTANCE_* event names the group's instance, the others the group. A
// group already deregistered is left alone, event included, so that a
// cause seen twice is recorded once.
func (s *Service) ContainerGroupStopped(ctx context.Context, fleetID, name, code, message string) error {
	var ended []*game.Process
	err := s.update(ctx, func(tx store.Tx) error {
		ended = nil
		c, err := tx.GetCompute(fleetID, name)
		if game.IsKind(err, game.NotFound) {
			return nil
		} else if err != nil {
			return err
		}
		resource := name
		switch code {
		case wire.EventCodeInstanceInterrupted, wire.EventCodeInstanceRecycled, wire.EventCodeInstanceReplacedUnhealthy:
			resource = c.InstanceID
		}
		if err := s.ctl.RecordEvent(tx, fleetID, resource, code, message); err != nil {
			return err
		}
		ended, err = s.procs.EndCompute(tx, fleetID, name)
		return err
	})
	if err != nil {
		return err
	}
	s.procs.ProcessesEnded(ended)
	return nil
}
