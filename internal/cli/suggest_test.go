package cli

import (
	"strings"
	"testing"
)

func TestUnknownOperation(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"create-gme-session", `unknown operation "create-gme-session"; did you mean create-game-session?`},
		{"creat-game-sesion", `did you mean create-game-session?`},
		{"CreateGameSession", `the operation CreateGameSession is "create-game-session" here, as in "aws gamelift" (anylift create-game-session ...)`},
		{"createGameSession", `is "create-game-session" here`},
		{"DescribeFleetAttributes", `is "describe-fleet-attributes" here`},
		{"create-script", `CreateScript is a GameLift operation Anylift does not serve`},
		{"CreateBuild", `CreateBuild is a GameLift operation Anylift does not serve`},
		{"describe-fleet", `did you mean describe-fleet-attributes, describe-fleet-capacity, `},
		{"describe-game-session", `did you mean describe-game-sessions, describe-game-session-details, `},
		{"list-fleet", `did you mean list-fleets?`},
		{"sevre", `did you mean serve?`},
		{"vesion", `did you mean version?`},
		{"xyzzy", `unknown operation "xyzzy" ("anylift help" lists the operations)`},
		{"", `unknown operation ""`},
	} {
		got := unknownOperation(c.name).Error()
		if !strings.Contains(got, c.want) {
			t.Errorf("%q: %s\nwant it to contain %s", c.name, got, c.want)
		}
		if strings.Count(got, "\n") > 0 {
			t.Errorf("%q: the error is more than a line: %s", c.name, got)
		}
	}
}

func TestClosestByPrefix(t *testing.T) {
	got := closest("describe-fleet-", servedNames())
	if len(got) != 5 {
		t.Fatalf("describe-fleet-: %v, want five names", got)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, "describe-fleet-") {
			t.Errorf("describe-fleet-: %v holds %s", got, n)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"abc", "ab", 1}, {"kitten", "sitting", 3}, {"serve", "sevre", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestSummaries: every served operation has its description, and no
// other operation has one.
func TestSummaries(t *testing.T) {
	for _, n := range servedNames() {
		c := served()[n]
		if s := summaries[c.Op]; s == "" || !strings.HasSuffix(s, ".") {
			t.Errorf("%s has no summary (or one not ending a sentence): %q", c.Op, s)
		}
	}
	for op := range summaries {
		if c, ok := commands[op]; !ok || !IsOperation(c.Name) {
			t.Errorf("summary of %s, which is not served", op)
		}
	}
}
