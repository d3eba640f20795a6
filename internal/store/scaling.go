package store

import "github.com/anylift/anylift/internal/game"

// ScalingPolicyTx reads and writes fleets' scaling policies, unique by
// fleet and name. They go with their fleet (DeleteFleet).
type ScalingPolicyTx interface {
	// PutScalingPolicy writes p, replacing the fleet's policy of that
	// name if there is one.
	PutScalingPolicy(p *game.ScalingPolicy) error
	// GetScalingPolicy returns one policy; NotFound when absent.
	GetScalingPolicy(fleetID, name string) (*game.ScalingPolicy, error)
	// DeleteScalingPolicy removes one policy; NotFound when absent.
	DeleteScalingPolicy(fleetID, name string) error
	// ListScalingPolicies lists a fleet's policies by name, only those of
	// status when it is not empty.
	ListScalingPolicies(fleetID, status string, p Page) (list []*game.ScalingPolicy, next string, err error)
	// ScaledFleets lists the fleets with an ACTIVE policy of type
	// policyType (any type when empty), by id; with fleet ownership, only
	// those this node owns (a timer's query).
	ScaledFleets(policyType string) ([]string, error)
}
