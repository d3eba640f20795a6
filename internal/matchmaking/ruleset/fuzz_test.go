package ruleset

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no body makes the loader panic, and every refusal is an
// *Error with a message.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/valid/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(string(b))
		}
	}
	f.Add(`{"ruleLanguageVersion":"1.0","teams":[{"name":"a","minPlayers":1,"maxPlayers":1}],"rules":[{"name":"c","type":"compound","statement":"not(not(not(x)))"}]}`)
	f.Add(`{"ruleLanguageVersion":"1.0","teams":[{"name":"a","minPlayers":1,"maxPlayers":1}],"rules":[{"name":"c","type":"comparison","operation":"=","measurements":"max(min(avg(teams[a,b].players.attributes[]))"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		rs, err := Parse(body)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Error() == "" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if len(rs.Instances) == 0 || rs.Capacity() > MaxMatchPlayers {
			t.Fatalf("accepted a rule set with %d teams and capacity %d", len(rs.Instances), rs.Capacity())
		}
	})
	_ = ParseExpr
}

// FuzzParseExpr: the expression and statement parsers never panic.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"avg(flatten(teams[*].players.attributes[skill]))", "count(teams[red,blue].players)",
		"teams[a].players[playerId]", "or(and(A, B), not(C))", "xor(A,B)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseExpr(s)
		_, _ = ParseStatement(s)
	})
}
