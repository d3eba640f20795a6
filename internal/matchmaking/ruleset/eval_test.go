package ruleset

import (
	"fmt"
	"testing"
)

func player(id string, skill float64, chars ...string) PlayerView {
	return PlayerView{ID: id, Attrs: map[string]Value{
		"skill":     {Type: TypeNumber, N: skill},
		"character": {Type: TypeStringList, SL: chars},
	}}
}

// render prints a value compactly: numbers, strings, [lists], _ for none.
func render(v Val) string {
	switch v.Kind {
	case Num:
		return fmt.Sprint(v.N)
	case Str:
		return v.S
	case List:
		s := "["
		for i, x := range v.L {
			if i > 0 {
				s += " "
			}
			s += render(x)
		}
		return s + "]"
	}
	return "_"
}

func TestEval(t *testing.T) {
	teams := []TeamView{
		{Name: "red", Base: "red", Players: []PlayerView{player("a", 10, "medic", "tank"), player("b", 20, "medic")}},
		{Name: "blue", Base: "blue", Players: []PlayerView{player("c", 30, "medic", "scout"), player("d", 50, "tank", "medic"), player("e", 40)}},
		{Name: "green", Base: "green"},
	}
	cases := map[string]string{
		"teams[red].players.attributes[skill]":                              "[10 20]",
		"teams[*].players.attributes[skill]":                                "[[10 20] [30 50 40] []]",
		"avg(teams[*].players.attributes[skill])":                           "[15 40 _]",
		"avg(flatten(teams[*].players.attributes[skill]))":                  "30",
		"max(avg(teams[*].players.attributes[skill]))":                      "40",
		"count(teams[*].players)":                                           "[2 3 0]",
		"max(count(teams[*].players))":                                      "3",
		"count(teams[red,blue].players)":                                    "[2 3]",
		"count(teams[green].players)":                                       "0",
		"sum(teams[green].players.attributes[skill])":                       "0",
		"min(teams[green].players.attributes[skill])":                       "_",
		"median(teams[blue].players.attributes[skill])":                     "40",
		"median(flatten(teams[*].players.attributes[skill]))":               "30",
		"median(teams[red].players.attributes[skill])":                      "15",
		"stddev(teams[red].players.attributes[skill])":                      "5",
		"teams[red].players[playerId]":                                      "[a b]",
		"flatten(teams[*].players[playerId])":                               "[a b c d e]",
		"flatten(teams[*].players.attributes[character])":                   "[[medic tank] [medic] [medic scout] [tank medic] []]",
		"set_intersection(teams[blue].players.attributes[character])":       "[]",
		"set_intersection(teams[red].players.attributes[character])":        "[medic]",
		"set_intersection(teams[*].players.attributes[character])":          "[[medic] [] []]",
		"count(set_intersection(teams[red].players.attributes[character]))": "1",
	}
	for text, want := range cases {
		e, err := ParseExpr(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		e.walkPaths(func(p *Expr) { p.Grouped = p.AllTeams || len(p.Teams) > 1 })
		if got := render(e.Eval(teams)); got != want {
			t.Errorf("%s = %s, want %s", text, got, want)
		}
	}
}

// TestEvalQuantityTeams: a base name with quantity > 1 means all its
// instances, grouped per team.
func TestEvalQuantityTeams(t *testing.T) {
	rs, err := Parse(`{"ruleLanguageVersion": "1.0", "playerAttributes": [{"name": "skill", "type": "number"}],
	  "teams": [{"name": "trio", "minPlayers": 1, "maxPlayers": 3, "quantity": 2}, {"name": "solo", "minPlayers": 1, "maxPlayers": 1}],
	  "rules": [{"name": "r", "type": "comparison", "operation": "=", "measurements": ["avg(teams[trio].players.attributes[skill])", "count(teams[trio_2].players)"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	teams := []TeamView{
		{Name: "trio_1", Base: "trio", Players: []PlayerView{player("a", 1), player("b", 3)}},
		{Name: "trio_2", Base: "trio", Players: []PlayerView{player("c", 10)}},
		{Name: "solo", Base: "solo", Players: []PlayerView{player("d", 99)}},
	}
	r, _ := rs.Rule("r")
	if got := render(r.Measurements[0].Eval(teams)); got != "[2 10]" {
		t.Errorf("avg over trio instances = %s", got)
	}
	if got := render(r.Measurements[1].Eval(teams)); got != "1" {
		t.Errorf("count of one instance = %s", got)
	}
}
