package game

import "time"

// Scaling policy statuses. A policy is written ACTIVE and removed by
// DeleteScalingPolicy; the model's other statuses (UPDATE_REQUESTED,
// DELETING, ...) name steps Anylift takes at once.
const ScalingPolicyActive = "ACTIVE"

// Scaling policy types.
const (
	PolicyTargetBased = "TargetBased"
	PolicyRuleBased   = "RuleBased"
)

// ScalingPolicy is a fleet's scaling policy, named uniquely within the
// fleet. A target-based policy keeps PercentAvailableGameSessions at
// TargetValue; a rule-based one changes the capacity by Adjustment
// (AdjustmentType) once MetricName has compared to Threshold
// (ComparisonOperator) for EvaluationPeriods minutes. It applies to every
// location of its fleet.
type ScalingPolicy struct {
	FleetID    string
	Name       string
	Status     string
	PolicyType string
	MetricName string

	TargetValue float64 `json:",omitempty"`

	ComparisonOperator string  `json:",omitempty"`
	Threshold          float64 `json:",omitempty"`
	EvaluationPeriods  int     `json:",omitempty"`
	AdjustmentType     string  `json:",omitempty"`
	Adjustment         int     `json:",omitempty"`

	// ActedAt is when the policy last changed its fleet's capacity: a
	// scale-down, and a rule's next action, wait their time from it, on
	// whichever node evaluates the policy.
	ActedAt time.Time `json:",omitzero"`
}
