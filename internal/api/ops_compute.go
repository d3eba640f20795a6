package api

import "github.com/anylift/anylift/internal/computes"

func computeOps(s *computes.Service, m map[string]handler) {
	m["RegisterCompute"] = op(s.RegisterCompute)
	m["DeregisterCompute"] = op(s.DeregisterCompute)
	m["DescribeCompute"] = op(s.DescribeCompute)
	m["ListCompute"] = op(s.ListCompute)
	m["GetComputeAuthToken"] = op(s.GetComputeAuthToken)
}
