package api

import "github.com/anylift/anylift/internal/control"

func computeOps(s *control.Service, m map[string]handler) {
	m["RegisterCompute"] = op(s.RegisterCompute)
	m["DeregisterCompute"] = op(s.DeregisterCompute)
	m["DescribeCompute"] = op(s.DescribeCompute)
	m["ListCompute"] = op(s.ListCompute)
	m["GetComputeAuthToken"] = op(s.GetComputeAuthToken)
}
