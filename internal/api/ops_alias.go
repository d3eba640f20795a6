package api

import "github.com/anylift/anylift/internal/control"

func aliasOps(s *control.Service, m map[string]handler) {
	m["CreateAlias"] = op(s.CreateAlias)
	m["DescribeAlias"] = op(s.DescribeAlias)
	m["ListAliases"] = op(s.ListAliases)
	m["UpdateAlias"] = op(s.UpdateAlias)
	m["DeleteAlias"] = op(s.DeleteAlias)
	m["ResolveAlias"] = op(s.ResolveAlias)
}
