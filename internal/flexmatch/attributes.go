package flexmatch

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/wire"
)

// attributeValue converts a player attribute from the wire (exactly one of
// S, N, SL, SDM) to the rule language's value; InvalidRequest names the
// attribute otherwise. Repeated SL items after the first are dropped, as
// GameLift ignores them.
func attributeValue(name string, in wire.AttributeValue) (ruleset.Value, error) {
	set := 0
	var v ruleset.Value
	if in.S != nil {
		set, v = set+1, ruleset.Value{Type: ruleset.TypeString, S: *in.S}
	}
	if in.N != nil {
		set, v = set+1, ruleset.Value{Type: ruleset.TypeNumber, N: *in.N}
	}
	if in.SL != nil {
		seen := map[string]bool{}
		l := make([]string, 0, len(in.SL))
		for _, s := range in.SL {
			if !seen[s] {
				seen[s] = true
				l = append(l, s)
			}
		}
		set, v = set+1, ruleset.Value{Type: ruleset.TypeStringList, SL: l}
	}
	if in.SDM != nil {
		set, v = set+1, ruleset.Value{Type: ruleset.TypeStringNumberMap, SDM: in.SDM}
	}
	if set != 1 {
		return ruleset.Value{}, game.Errorf(game.InvalidRequest, "PlayerAttributes[%s] must set exactly one of S, N, SL, SDM", name)
	}
	return v, nil
}

// attributeValues converts a player's attributes; see attributeValue.
func attributeValues(in map[string]wire.AttributeValue) (map[string]ruleset.Value, error) {
	out := make(map[string]ruleset.Value, len(in))
	for k, a := range in {
		v, err := attributeValue(k, a)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// storedValues converts stored attributes, as attributeValues does the
// wire's, without building the wire's map first.
func storedValues(in map[string]game.AttributeValue) (map[string]ruleset.Value, error) {
	out := make(map[string]ruleset.Value, len(in))
	for k, a := range in {
		v, err := attributeValue(k, wire.AttributeValue{S: a.S, N: a.N, SL: a.SL, SDM: a.SDM})
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
