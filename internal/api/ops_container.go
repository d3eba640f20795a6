package api

import "github.com/anylift/anylift/internal/control"

func containerOps(s *control.Service, m map[string]handler) {
	m["CreateContainerGroupDefinition"] = op(s.CreateContainerGroupDefinition)
	m["DescribeContainerGroupDefinition"] = op(s.DescribeContainerGroupDefinition)
	m["ListContainerGroupDefinitions"] = op(s.ListContainerGroupDefinitions)
	m["ListContainerGroupDefinitionVersions"] = op(s.ListContainerGroupDefinitionVersions)
	m["UpdateContainerGroupDefinition"] = op(s.UpdateContainerGroupDefinition)
	m["DeleteContainerGroupDefinition"] = op(s.DeleteContainerGroupDefinition)
}
