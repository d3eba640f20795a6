-- Fleets' scaling policies (PutScalingPolicy), unique by fleet and name,
-- each as a JSON document; status and policy_type are the columns the
-- scaling timer and DescribeScalingPolicies filter on. Owned by the
-- scaling area.
CREATE TABLE scaling_policies (
    fleet_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL,
    policy_type TEXT NOT NULL,
    doc         TEXT NOT NULL,
    PRIMARY KEY (fleet_id, name)
);
CREATE INDEX scaling_policies_status ON scaling_policies (status, policy_type, fleet_id);
