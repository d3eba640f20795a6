package ruleset

import "fmt"

// CheckAttributes returns an error naming the first attribute in given
// whose type differs from its declaration (StartMatchmaking refuses such a
// player). Undeclared attributes are allowed.
func (rs *RuleSet) CheckAttributes(given map[string]Value) error {
	for _, a := range rs.Attributes {
		if v, ok := given[a.Name]; ok && v.Type != a.Type {
			return fmt.Errorf("player attribute %q must be of type %s, not %s", a.Name, a.Type, v.Type)
		}
	}
	return nil
}

// PlayerAttributes returns a player's declared attributes as rules see
// them: the given value, or the default when absent. Undeclared attributes
// are left out. ok is false when a declared attribute without a default is
// missing or of another type: such a player can never be matched.
func (rs *RuleSet) PlayerAttributes(given map[string]Value) (attrs map[string]Value, ok bool) {
	attrs = make(map[string]Value, len(rs.Attributes))
	for _, a := range rs.Attributes {
		v, has := given[a.Name]
		switch {
		case has && v.Type == a.Type:
			attrs[a.Name] = v
		case a.Default != nil:
			attrs[a.Name] = *a.Default
		default:
			return nil, false
		}
	}
	return attrs, true
}
