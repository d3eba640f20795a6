package flexmatch

import (
	"testing"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/wire"
)

func TestAttributeValues(t *testing.T) {
	n := 12.5
	got, err := attributeValues(map[string]wire.AttributeValue{
		"skill": {N: &n}, "name": {S: wire.String("ann")}, "modes": {SL: []string{"a", "b", "a"}},
		"maps": {SDM: map[string]float64{"harbor": 3}},
	})
	if err != nil || got["skill"].N != 12.5 || got["name"].S != "ann" || len(got["modes"].SL) != 2 ||
		got["maps"].Type != ruleset.TypeStringNumberMap {
		t.Fatalf("%+v %v", got, err)
	}
	for what, bad := range map[string]wire.AttributeValue{"none": {}, "two": {N: &n, S: wire.String("x")}} {
		if _, err := attributeValues(map[string]wire.AttributeValue{"a": bad}); !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("%s: %v, want InvalidRequest", what, err)
		}
	}
}
