package containers

import (
	"context"
	"math"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Scaling policies and fleet actions. A policy belongs to a container
// fleet and applies to each of its locations; the scaler (scaler.go)
// evaluates it and moves the location's desired capacity, the one
// UpdateFleetCapacity sets and the container fleet controller follows.
// Anywhere fleets have no capacity Anylift can change (their computes are
// whatever registers), so they take no policy.

// scalableFleet reads the fleet a scaling call names: a container fleet,
// else InvalidRequest saying why an Anywhere fleet cannot scale.
func scalableFleet(tx store.Tx, idOrARN string) (*game.Fleet, error) {
	f, err := tx.GetFleet(game.ResourceID(idOrARN, "fleet"))
	if err != nil {
		return nil, err
	}
	if f.Container == nil {
		return nil, game.Errorf(game.InvalidRequest,
			"fleet %s is an %s fleet: its capacity is the computes registered to it, which Anylift does not add or remove, so it cannot be auto-scaled",
			f.ID, f.ComputeType)
	}
	return f, nil
}

// PutScalingPolicy creates or replaces (by name) a scaling policy of a
// container fleet. It is in force at once, unless the fleet's
// auto-scaling is stopped in a location.
func (s *Service) PutScalingPolicy(ctx context.Context, in *wire.PutScalingPolicyInput) (*wire.PutScalingPolicyOutput, error) {
	p, err := policyIn(in)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		f, err := scalableFleet(tx, *in.FleetId)
		if err != nil {
			return err
		}
		p.FleetID = f.ID
		if old, err := tx.GetScalingPolicy(f.ID, p.Name); err == nil {
			p.ActedAt = old.ActedAt
		} else if !game.IsKind(err, game.NotFound) {
			return err
		}
		if p.PolicyType == game.PolicyTargetBased {
			if other, err := targetPolicy(tx, f.ID); err != nil {
				return err
			} else if other != nil && other.Name != p.Name {
				return game.Errorf(game.InvalidRequest, "fleet %s already has the target-based policy %s; a fleet has at most one (delete it, or put this one under its name)", f.ID, other.Name)
			}
		}
		return tx.PutScalingPolicy(p)
	})
	if err != nil {
		return nil, err
	}
	s.scaler.policyPut(p)
	s.wakeScaler(p.FleetID)
	return &wire.PutScalingPolicyOutput{Name: wire.String(p.Name)}, nil
}

// policyIn checks a PutScalingPolicy request and returns its policy,
// ACTIVE. A target-based policy tracks PercentAvailableGameSessions and
// takes only a TargetConfiguration; a rule-based one (the default) takes
// the five members of its rule and no TargetConfiguration.
func policyIn(in *wire.PutScalingPolicyInput) (*game.ScalingPolicy, error) {
	p := &game.ScalingPolicy{Name: *in.Name, Status: game.ScalingPolicyActive, MetricName: *in.MetricName,
		PolicyType: wire.Deref(in.PolicyType)}
	if p.PolicyType == "" {
		p.PolicyType = game.PolicyRuleBased
	}
	rule := map[string]bool{
		"ScalingAdjustment": in.ScalingAdjustment != nil, "ScalingAdjustmentType": in.ScalingAdjustmentType != nil,
		"Threshold": in.Threshold != nil, "ComparisonOperator": in.ComparisonOperator != nil, "EvaluationPeriods": in.EvaluationPeriods != nil,
	}
	if p.PolicyType == game.PolicyTargetBased {
		for _, m := range []string{"ScalingAdjustment", "ScalingAdjustmentType", "Threshold", "ComparisonOperator", "EvaluationPeriods"} {
			if rule[m] {
				return nil, game.Errorf(game.InvalidRequest, "%s is for rule-based policies; a TargetBased policy takes only MetricName and TargetConfiguration", m)
			}
		}
		if p.MetricName != wire.MetricNamePercentavailablegamesessions {
			return nil, game.Errorf(game.InvalidRequest, "a TargetBased policy tracks PercentAvailableGameSessions, not %s", p.MetricName)
		}
		if in.TargetConfiguration == nil {
			return nil, game.Errorf(game.InvalidRequest, "a TargetBased policy needs a TargetConfiguration")
		}
		v := *in.TargetConfiguration.TargetValue
		if math.IsNaN(v) || v < 0 || v >= 100 {
			return nil, game.Errorf(game.InvalidRequest, "TargetConfiguration.TargetValue %v: the buffer is a percentage of the fleet's game session capacity, from 0 up to (not including) 100", v)
		}
		p.TargetValue = v
		return p, nil
	}
	if in.TargetConfiguration != nil {
		return nil, game.Errorf(game.InvalidRequest, "TargetConfiguration is for TargetBased policies; this policy is %s", p.PolicyType)
	}
	for _, m := range []string{"ComparisonOperator", "Threshold", "EvaluationPeriods", "ScalingAdjustmentType", "ScalingAdjustment"} {
		if !rule[m] {
			return nil, game.Errorf(game.InvalidRequest, "a RuleBased policy needs %s", m)
		}
	}
	if math.IsNaN(*in.Threshold) || math.IsInf(*in.Threshold, 0) {
		return nil, game.Errorf(game.InvalidRequest, "Threshold %v is not a number", *in.Threshold)
	}
	p.ComparisonOperator, p.Threshold, p.EvaluationPeriods = *in.ComparisonOperator, *in.Threshold, int(*in.EvaluationPeriods)
	p.AdjustmentType, p.Adjustment = *in.ScalingAdjustmentType, int(*in.ScalingAdjustment)
	if p.AdjustmentType == wire.ScalingAdjustmentTypeExactcapacity && p.Adjustment < 0 {
		return nil, game.Errorf(game.InvalidRequest, "ScalingAdjustment %d: an ExactCapacity adjustment is a number of instances, not below 0", p.Adjustment)
	}
	return p, nil
}

// targetPolicy returns the fleet's target-based policy, nil when it has
// none.
func targetPolicy(tx store.Tx, fleetID string) (*game.ScalingPolicy, error) {
	page := store.Page{Limit: 100}
	for {
		list, next, err := tx.ListScalingPolicies(fleetID, "", page)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			if p.PolicyType == game.PolicyTargetBased {
				return p, nil
			}
		}
		if next == "" {
			return nil, nil
		}
		page.Token = next
	}
}

// DescribeScalingPolicies lists a fleet's policies by name, each once per
// location of the fleet (or for the location asked), those of
// StatusFilter when given. An Anywhere fleet has none.
func (s *Service) DescribeScalingPolicies(ctx context.Context, in *wire.DescribeScalingPoliciesInput) (*wire.DescribeScalingPoliciesOutput, error) {
	out := &wire.DescribeScalingPoliciesOutput{ScalingPolicies: []wire.ScalingPolicy{}}
	err := s.view(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		locations := f.Locations
		if in.Location != nil {
			if !containsString(f.Locations, *in.Location) {
				return game.Errorf(game.InvalidRequest, "fleet %s has no location %s", f.ID, *in.Location)
			}
			locations = []string{*in.Location}
		}
		list, next, err := tx.ListScalingPolicies(f.ID, wire.Deref(in.StatusFilter), store.RequestPage(in.Limit, in.NextToken))
		if err != nil {
			return err
		}
		for _, p := range list {
			for _, l := range locations {
				out.ScalingPolicies = append(out.ScalingPolicies, policyOut(f, p, l))
			}
		}
		out.NextToken = wire.String(next)
		return nil
	})
	return out, err
}

func policyOut(f *game.Fleet, p *game.ScalingPolicy, location string) wire.ScalingPolicy {
	out := wire.ScalingPolicy{
		FleetId: wire.String(f.ID), FleetArn: wire.String(f.ARN), Name: wire.String(p.Name), Status: wire.String(p.Status),
		MetricName: wire.String(p.MetricName), PolicyType: wire.String(p.PolicyType), Location: wire.String(location),
	}
	if p.PolicyType == game.PolicyTargetBased {
		out.TargetConfiguration = &wire.TargetConfiguration{TargetValue: wire.Float64(p.TargetValue)}
		return out
	}
	out.ComparisonOperator, out.Threshold = wire.String(p.ComparisonOperator), wire.Float64(p.Threshold)
	out.EvaluationPeriods = wire.Int32(p.EvaluationPeriods)
	out.ScalingAdjustmentType, out.ScalingAdjustment = wire.String(p.AdjustmentType), wire.Int32(p.Adjustment)
	return out
}

// DeleteScalingPolicy removes a policy: it is no longer in force and no
// record of it is kept, as GameLift does.
func (s *Service) DeleteScalingPolicy(ctx context.Context, in *wire.DeleteScalingPolicyInput) (*struct{}, error) {
	var fleetID string
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(game.ResourceID(*in.FleetId, "fleet"))
		if err != nil {
			return err
		}
		fleetID = f.ID
		return tx.DeleteScalingPolicy(f.ID, *in.Name)
	})
	if err != nil {
		return nil, err
	}
	s.scaler.policyGone(fleetID, *in.Name)
	return &struct{}{}, nil
}

// StopFleetActions suspends auto-scaling in one location of a container
// fleet (the home region when none is named): its policies stay, ACTIVE,
// and act again after StartFleetActions. UpdateFleetCapacity still works.
func (s *Service) StopFleetActions(ctx context.Context, in *wire.StopFleetActionsInput) (*wire.StopFleetActionsOutput, error) {
	f, err := s.setScalingStopped(ctx, *in.FleetId, in.Location, true)
	if err != nil {
		return nil, err
	}
	return &wire.StopFleetActionsOutput{FleetId: wire.String(f.ID), FleetArn: wire.String(f.ARN)}, nil
}

// StartFleetActions resumes auto-scaling where StopFleetActions suspended
// it; where it was never stopped it changes nothing.
func (s *Service) StartFleetActions(ctx context.Context, in *wire.StartFleetActionsInput) (*wire.StartFleetActionsOutput, error) {
	f, err := s.setScalingStopped(ctx, *in.FleetId, in.Location, false)
	if err != nil {
		return nil, err
	}
	s.wakeScaler(f.ID)
	return &wire.StartFleetActionsOutput{FleetId: wire.String(f.ID), FleetArn: wire.String(f.ARN)}, nil
}

// setScalingStopped stops or starts AUTO_SCALING (the model's only fleet
// action) in a location of a container fleet.
func (s *Service) setScalingStopped(ctx context.Context, fleetID string, loc *string, stopped bool) (*game.Fleet, error) {
	location := wire.Deref(loc)
	if location == "" {
		location = s.cfg.Account.Region
	}
	var f *game.Fleet
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if f, err = scalableFleet(tx, fleetID); err != nil {
			return err
		}
		c, ok := f.CapacityIn(location)
		if !ok {
			return game.Errorf(game.InvalidRequest, "fleet %s has no location %s", f.ID, location)
		}
		if c.ScalingStopped == stopped {
			return nil
		}
		c.ScalingStopped = stopped
		f.SetCapacity(c)
		return tx.UpdateFleet(f)
	})
	if err != nil {
		return nil, err
	}
	s.scaler.forgetLocation(f.ID, location)
	return f, nil
}
