package api

import "github.com/anylift/anylift/internal/control"

func utilizationOps(s *control.Service, m map[string]handler) {
	m["DescribeFleetUtilization"] = op(s.DescribeFleetUtilization)
	m["DescribeFleetCapacity"] = op(s.DescribeFleetCapacity)
	m["DescribeFleetLocationUtilization"] = op(s.DescribeFleetLocationUtilization)
	m["DescribeFleetLocationCapacity"] = op(s.DescribeFleetLocationCapacity)
}
