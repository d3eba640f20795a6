package access

import (
	"strings"
	"testing"
)

var known = []string{"CreateGameSession", "DescribeGameSessions", "DescribeFleetAttributes", "SearchGameSessions",
	"CreatePlayerSession", "DeleteFleet", "TerminateGameSession"}

func mustPolicy(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(doc), known)
	if err != nil {
		t.Fatalf("ParsePolicy(%s): %v", doc, err)
	}
	return p
}

const (
	fleetA = "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-a"
	fleetB = "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-b"
	gsA    = "arn:aws:gamelift:us-west-2::gamesession/fleet-a/custom-home/gsess-1"
)

func TestDecide(t *testing.T) {
	readFleetA := mustPolicy(t, `{
		"Version": "2012-10-17",
		"Statement": [
			{"Sid": "Read", "Effect": "Allow", "Action": "gamelift:Describe*", "Resource": "*"},
			{"Effect": "Allow", "Action": ["gamelift:CreateGameSession", "gamelift:CreatePlayerSession"],
			 "Resource": ["arn:aws:gamelift:*:*:fleet/fleet-a", "arn:aws:gamelift:*::gamesession/fleet-a/*"]},
			{"Effect": "Deny", "Action": "gamelift:DescribeFleetAttributes", "Resource": "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-b"}
		]}`)
	single := mustPolicy(t, `{"Statement": {"Effect": "Allow", "NotAction": "gamelift:Delete*", "Resource": "*"}}`)
	notRes := mustPolicy(t, `{"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"},
		{"Effect": "Deny", "Action": "gamelift:*", "NotResource": "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-?"}]}`)
	for _, tc := range []struct {
		name     string
		p        *Policy
		action   string
		resource string
		want     Decision
	}{
		{"describe anything", readFleetA, "gamelift:DescribeGameSessions", "*", Allowed},
		{"describe a fleet", readFleetA, "gamelift:DescribeFleetAttributes", fleetA, Allowed},
		{"explicit deny wins", readFleetA, "gamelift:DescribeFleetAttributes", fleetB, Denied},
		{"case of the action", readFleetA, "GameLift:describegamesessions", "*", Allowed},
		{"create on fleet a", readFleetA, "gamelift:CreateGameSession", fleetA, Allowed},
		{"create on fleet b", readFleetA, "gamelift:CreateGameSession", fleetB, NotAllowed},
		{"create on *", readFleetA, "gamelift:CreateGameSession", "*", NotAllowed},
		{"player session in fleet a", readFleetA, "gamelift:CreatePlayerSession", gsA, Allowed},
		{"player session elsewhere", readFleetA, "gamelift:CreatePlayerSession", strings.Replace(gsA, "fleet-a", "fleet-b", 1), NotAllowed},
		{"resource case", readFleetA, "gamelift:CreateGameSession", strings.ToUpper(fleetA), NotAllowed},
		{"action not granted", readFleetA, "gamelift:DeleteFleet", fleetA, NotAllowed},
		{"NotAction allows", single, "gamelift:CreateGameSession", fleetA, Allowed},
		{"NotAction excludes", single, "gamelift:DeleteFleet", fleetA, NotAllowed},
		{"NotResource deny outside", notRes, "gamelift:DeleteFleet", "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-ab", Denied},
		{"NotResource deny *", notRes, "gamelift:ListFleets", "*", Denied},
		{"NotResource inside", notRes, "gamelift:DeleteFleet", fleetA, Allowed},
	} {
		if got := tc.p.Decide(tc.action, tc.resource); got != tc.want {
			t.Errorf("%s: Decide(%s, %s) = %v, want %v", tc.name, tc.action, tc.resource, got, tc.want)
		}
	}
}

func TestKeyAllowed(t *testing.T) {
	k := &Key{ID: "AKID", Policy: mustPolicy(t, `{"Statement": [
		{"Effect": "Allow", "Action": "gamelift:DescribeFleetAttributes", "Resource": ["arn:aws:gamelift:*:*:fleet/fleet-a", "arn:aws:gamelift:*:*:fleet/fleet-b"]},
		{"Effect": "Deny", "Action": "*", "Resource": "arn:aws:gamelift:*:*:fleet/fleet-b"}]}`)}
	if ok, _, _ := k.Allowed("gamelift:DescribeFleetAttributes", []string{fleetA}); !ok {
		t.Error("fleet a refused")
	}
	if ok, refused, explicit := k.Allowed("gamelift:DescribeFleetAttributes", []string{fleetA, fleetB}); ok || refused != fleetB || !explicit {
		t.Errorf("fleets a and b: %v %s %v, want refused on b explicitly", ok, refused, explicit)
	}
	if ok, refused, explicit := k.Allowed("gamelift:DescribeFleetAttributes", nil); ok || refused != "*" || explicit {
		t.Errorf("no resource: %v %s %v, want refused on * implicitly", ok, refused, explicit)
	}
	var full *Key
	if ok, _, _ := full.Allowed("gamelift:DeleteFleet", nil); !ok {
		t.Error("a nil key is refused")
	}
	if ok, _, _ := (&Key{ID: "x"}).Allowed("gamelift:DeleteFleet", nil); !ok {
		t.Error("a key without a policy is refused")
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{``, "not a JSON document"},
		{`[]`, "must be a JSON object"},
		{`{"Statement": []}`, "non-empty list"},
		{`{}`, "Statement: missing"},
		{`{"Version": "2012-10-17", "Version": "2012-10-17", "Statement": {}}`, `"Version" is given twice`},
		{`{"Version": "2020-01-01", "Statement": {}}`, "Version"},
		{`{"version": "2012-10-17", "Statement": {}}`, `unknown member "version"`},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}} {}`, "data after"},
		{`{"Statement": {"Effect": "allow", "Action": "*", "Resource": "*"}}`, `Statement.Effect: must be "Allow" or "Deny"`},
		{`{"Statement": {"Action": "*", "Resource": "*"}}`, "Effect is missing"},
		{`{"Statement": {"Effect": "Allow", "Resource": "*"}}`, "exactly one of Action and NotAction"},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "NotAction": "*", "Resource": "*"}}`, "exactly one of Action and NotAction"},
		{`{"Statement": {"Effect": "Allow", "Action": "*"}}`, "exactly one of Resource and NotResource"},
		{`{"Statement": [{"Effect": "Allow", "Action": ["gamelift:Describe*", "s3:GetObject"], "Resource": "*"}]}`, `Statement[0].Action[1]: "s3:GetObject": only gamelift actions`},
		{`{"Statement": {"Effect": "Allow", "Action": "gamelift:DescribeGameSesions", "Resource": "*"}}`, "matches no gamelift action"},
		{`{"Statement": {"Effect": "Allow", "Action": "gamelift:", "Resource": "*"}}`, "an action has the form"},
		{`{"Statement": {"Effect": "Allow", "Action": "gamelift:Describe-*", "Resource": "*"}}`, "letters and digits"},
		{`{"Statement": {"Effect": "Allow", "Action": [], "Resource": "*"}}`, "non-empty list of strings"},
		{`{"Statement": {"Effect": "Allow", "Action": [1], "Resource": "*"}}`, "non-empty list of strings"},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "fleet-a"}}`, "a resource is * or an ARN"},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::bucket"}}`, "only gamelift resources"},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "arn:aws:gamelift:*:*:fleet/${aws:username}"}}`, "policy variables"},
		{`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {}}}`, "conditions are not supported"},
		{`{"Statement": {"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*"}}`, "names no principal"},
		{`{"Statement": {"Effect": "Allow", "Actions": "*", "Resource": "*"}}`, "Statement.Actions: unknown member"},
		{`{"Statement": [{"Sid": "A", "Effect": "Allow", "Action": "*", "Resource": "*"}, {"Sid": "A", "Effect": "Deny", "Action": "*", "Resource": "*"}]}`, "Statement[1].Sid"},
		{`{"Statement": {"Sid": "a b", "Effect": "Allow", "Action": "*", "Resource": "*"}}`, "Sid: must be"},
		{`{"Statement": "Allow everything"}`, "statement object"},
		{`{"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}, 1]}`, "Statement[1]: must be a JSON object"},
	} {
		_, err := ParsePolicy([]byte(tc.doc), known)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePolicy(%s) = %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
	big := `{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}}` + strings.Repeat(" ", MaxPolicyBytes)
	if _, err := ParsePolicy([]byte(big), known); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a policy of %d bytes: %v", len(big), err)
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		fold, want bool
	}{
		{"*", "", false, true},
		{"*", "anything:at/all", false, true},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"a*c", "abbbc", false, true},
		{"a*c", "abbbd", false, false},
		{"*a*b*c*", "xxaxxbxxcxx", false, true},
		{"arn:aws:gamelift:*:*:fleet/*", "arn:aws:gamelift:us-west-2:1:fleet/fleet-a", false, true},
		{"arn:aws:gamelift:*:*:fleet/*", "arn:aws:gamelift:us-west-2:1:alias/alias-a", false, false},
		{"gamelift:describe*", "gamelift:DescribeFleetAttributes", true, true},
		{"gamelift:describe*", "gamelift:DescribeFleetAttributes", false, false},
		{"**", "x", false, true},
		{"x", "", false, false},
	} {
		if got := match(tc.pattern, tc.s, tc.fold); got != tc.want {
			t.Errorf("match(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.fold, got, tc.want)
		}
	}
}

// FuzzParsePolicy checks that no document makes the parser panic, that a
// policy it accepts can be evaluated, and that matching never takes more
// than quadratic work.
func FuzzParsePolicy(f *testing.F) {
	for _, seed := range []string{
		`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "gamelift:Describe*", "Resource": "*"}]}`,
		`{"Statement": {"Effect": "Deny", "NotAction": ["gamelift:Create*"], "NotResource": "arn:aws:gamelift:*:*:fleet/*"}}`,
		`{"Statement": [{"Sid": "A1", "Effect": "Allow", "Action": "*", "Resource": ["arn:aws:gamelift:us-west-2::gamesession/fleet-a/*"]}]}`,
		`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"StringEquals": {}}}}`,
		`{"Statement": {}}`, `{"a":1,"a":2}`, `[`, `{"Statement": [null]}`,
	} {
		f.Add([]byte(seed), "gamelift:CreateGameSession", fleetA)
	}
	f.Fuzz(func(t *testing.T, doc []byte, action, resource string) {
		p, err := ParsePolicy(doc, known)
		if err != nil {
			if p != nil {
				t.Fatal("a policy with an error")
			}
			return
		}
		if len(p.statements) == 0 {
			t.Fatal("a policy without statements")
		}
		d := p.Decide(action, resource)
		if d != Allowed && d != Denied && d != NotAllowed {
			t.Fatalf("decision %v", d)
		}
		// Parsing what was accepted again gives the same decisions.
		q, err := ParsePolicy(doc, known)
		if err != nil || q.Decide(action, resource) != d {
			t.Fatalf("parsing again: %v", err)
		}
	})
}

// FuzzMatch compares the matcher with a plain recursive one.
func FuzzMatch(f *testing.F) {
	f.Add("a*b?c", "aXXbYc", false)
	f.Add("*?*", "", true)
	f.Add("GameLift:*", "gamelift:X", true)
	f.Fuzz(func(t *testing.T, pattern, s string, fold bool) {
		if len(pattern) > 64 || len(s) > 64 {
			return
		}
		if got, want := match(pattern, s, fold), slowMatch(pattern, s, fold); got != want {
			t.Fatalf("match(%q, %q, %v) = %v, want %v", pattern, s, fold, got, want)
		}
	})
}

func slowMatch(p, s string, fold bool) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '*':
		return slowMatch(p[1:], s, fold) || s != "" && slowMatch(p, s[1:], fold)
	case '?':
		return s != "" && slowMatch(p[1:], s[1:], fold)
	}
	return s != "" && same(p[0], s[0], fold) && slowMatch(p[1:], s[1:], fold)
}

// BenchmarkDecide evaluates a policy of three statements, as a key's
// every request does: an action on one resource.
func BenchmarkDecide(b *testing.B) {
	p, err := ParsePolicy([]byte(`{"Statement": [
		{"Effect": "Allow", "Action": ["gamelift:Describe*", "gamelift:List*"], "Resource": "*"},
		{"Effect": "Allow", "Action": "gamelift:CreateGameSession", "Resource": "arn:aws:gamelift:*:*:fleet/*"},
		{"Effect": "Deny", "Action": "gamelift:Delete*", "Resource": "*"}]}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	k := &Key{ID: "AKID", Policy: p}
	res := []string{fleetA}
	b.ReportAllocs()
	for b.Loop() {
		if ok, _, _ := k.Allowed("gamelift:DescribeGameSessions", res); !ok {
			b.Fatal("refused")
		}
	}
}
