package api

import "github.com/anylift/anylift/internal/control"

func fleetOps(s *control.Service, m map[string]handler) {
	m["CreateFleet"] = op(s.CreateFleet)
	m["DescribeFleetAttributes"] = op(s.DescribeFleetAttributes)
	m["ListFleets"] = op(s.ListFleets)
	m["UpdateFleetAttributes"] = op(s.UpdateFleetAttributes)
	m["DeleteFleet"] = op(s.DeleteFleet)
	m["DescribeFleetLocationAttributes"] = op(s.DescribeFleetLocationAttributes)
	m["DescribeFleetEvents"] = op(s.DescribeFleetEvents)
	m["DescribeRuntimeConfiguration"] = op(s.DescribeRuntimeConfiguration)
	m["UpdateRuntimeConfiguration"] = op(s.UpdateRuntimeConfiguration)
}
