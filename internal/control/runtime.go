package control

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// maxProcessesPerCompute is GameLift's cap on the sum of
// ConcurrentExecutions in a runtime configuration.
const maxProcessesPerCompute = 50

// runtimeIn converts and checks a runtime configuration given as member
// (named in messages): 1–50 server processes whose ConcurrentExecutions add
// up to at most 50. A nil configuration is the empty one.
func runtimeIn(in *wire.RuntimeConfiguration, member string) (game.RuntimeConfiguration, error) {
	var rc game.RuntimeConfiguration
	if in == nil {
		return rc, nil
	}
	n := len(in.ServerProcesses)
	if n < 1 || n > 50 {
		return rc, game.Errorf(game.InvalidRequest, "%s.ServerProcesses must hold 1 to 50 server processes, not %d", member, n)
	}
	total := 0
	for _, p := range in.ServerProcesses {
		c := int(wire.Deref(p.ConcurrentExecutions))
		total += c
		rc.ServerProcesses = append(rc.ServerProcesses, game.ServerProcess{
			LaunchPath:           wire.Deref(p.LaunchPath),
			Parameters:           wire.Deref(p.Parameters),
			ConcurrentExecutions: c,
		})
	}
	if total > maxProcessesPerCompute {
		return rc, game.Errorf(game.InvalidRequest, "%s.ServerProcesses: the sum of ConcurrentExecutions is %d; at most %d server processes may run per compute",
			member, total, maxProcessesPerCompute)
	}
	rc.MaxConcurrentGameSessionActivations = int(wire.Deref(in.MaxConcurrentGameSessionActivations))
	rc.GameSessionActivationTimeoutSeconds = int(wire.Deref(in.GameSessionActivationTimeoutSeconds))
	return rc, nil
}

// runtimeOut is the wire form of a runtime configuration; unset limits are
// left out, and ServerProcesses is always a list.
func runtimeOut(rc game.RuntimeConfiguration) *wire.RuntimeConfiguration {
	out := &wire.RuntimeConfiguration{ServerProcesses: []wire.ServerProcess{}}
	for _, p := range rc.ServerProcesses {
		out.ServerProcesses = append(out.ServerProcesses, wire.ServerProcess{
			LaunchPath:           wire.String(p.LaunchPath),
			Parameters:           wire.String(p.Parameters),
			ConcurrentExecutions: wire.Int32(p.ConcurrentExecutions),
		})
	}
	if rc.MaxConcurrentGameSessionActivations > 0 {
		out.MaxConcurrentGameSessionActivations = wire.Int32(rc.MaxConcurrentGameSessionActivations)
	}
	if rc.GameSessionActivationTimeoutSeconds > 0 {
		out.GameSessionActivationTimeoutSeconds = wire.Int32(rc.GameSessionActivationTimeoutSeconds)
	}
	return out
}

// DescribeRuntimeConfiguration returns the fleet's runtime configuration
// (an empty one when none was set). NotFound for an unknown fleet.
func (s *Service) DescribeRuntimeConfiguration(ctx context.Context, in *wire.DescribeRuntimeConfigurationInput) (*wire.DescribeRuntimeConfigurationOutput, error) {
	var out *wire.DescribeRuntimeConfigurationOutput
	err := s.view(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		out = &wire.DescribeRuntimeConfigurationOutput{RuntimeConfiguration: runtimeOut(f.Runtime)}
		return nil
	})
	return out, err
}

// UpdateRuntimeConfiguration replaces the fleet's whole runtime
// configuration. Running processes are not touched: agents pick up the new
// configuration when they next read it.
func (s *Service) UpdateRuntimeConfiguration(ctx context.Context, in *wire.UpdateRuntimeConfigurationInput) (*wire.UpdateRuntimeConfigurationOutput, error) {
	if in.RuntimeConfiguration == nil {
		return nil, game.Errorf(game.InvalidRequest, "RuntimeConfiguration is required")
	}
	rc, err := runtimeIn(in.RuntimeConfiguration, "RuntimeConfiguration")
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		if f.Container != nil {
			return game.Errorf(game.InvalidRequest, "fleet %s is a container fleet: what it runs is its container group definitions (UpdateContainerFleet)", f.ID)
		}
		f.Runtime = rc
		return tx.UpdateFleet(f)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateRuntimeConfigurationOutput{RuntimeConfiguration: runtimeOut(rc)}, nil
}
