package api

import "github.com/anylift/anylift/internal/containers"

func containerOps(s *containers.Service, m map[string]handler) {
	m["CreateContainerGroupDefinition"] = op(s.CreateContainerGroupDefinition)
	m["DescribeContainerGroupDefinition"] = op(s.DescribeContainerGroupDefinition)
	m["ListContainerGroupDefinitions"] = op(s.ListContainerGroupDefinitions)
	m["ListContainerGroupDefinitionVersions"] = op(s.ListContainerGroupDefinitionVersions)
	m["UpdateContainerGroupDefinition"] = op(s.UpdateContainerGroupDefinition)
	m["DeleteContainerGroupDefinition"] = op(s.DeleteContainerGroupDefinition)
}

func containerFleetOps(s *containers.Service, m map[string]handler) {
	m["CreateContainerFleet"] = op(s.CreateContainerFleet)
	m["DescribeContainerFleet"] = op(s.DescribeContainerFleet)
	m["ListContainerFleets"] = op(s.ListContainerFleets)
	m["UpdateContainerFleet"] = op(s.UpdateContainerFleet)
	m["DeleteContainerFleet"] = op(s.DeleteContainerFleet)
	m["UpdateFleetCapacity"] = op(s.UpdateFleetCapacity)
	m["DescribeContainerGroupPortMappings"] = op(s.DescribeContainerGroupPortMappings)
	m["PutScalingPolicy"] = op(s.PutScalingPolicy)
	m["DescribeScalingPolicies"] = op(s.DescribeScalingPolicies)
	m["DeleteScalingPolicy"] = op(s.DeleteScalingPolicy)
	m["StartFleetActions"] = op(s.StartFleetActions)
	m["StopFleetActions"] = op(s.StopFleetActions)
}
