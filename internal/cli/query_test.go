package cli

import (
	"reflect"
	"strings"
	"testing"
)

// queryOver runs expr over the answer body, read as DescribeGameSessions
// reads it, and returns the result printed as JSON.
func queryOver(t *testing.T, body, expr string) string {
	t.Helper()
	tree, err := readAnswer([]byte(body), reflect.TypeOf(commands["DescribeGameSessions"].Output()))
	if err != nil {
		t.Fatal(err)
	}
	q, err := compileQuery(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	res, err := q.apply(tree)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var b strings.Builder
	writeValue(&b, res, 0)
	return strings.Join(strings.Fields(b.String()), " ")
}

const sessionsBody = `{"GameSessions":[
 {"GameSessionId":"b","Name":"beta","CreationTime":1767225600.500,"MaximumPlayerSessionCount":8,
  "GameProperties":[{"Key":"z","Value":"1"},{"Key":"a","Value":"2"}]},
 {"GameSessionId":"a","Name":"alpha","CreationTime":1767225601.0,"MaximumPlayerSessionCount":2}],
 "NextToken":"t"}`

// TestQueryKeepsOrderAndNumbers: what plain Go values lose comes back:
// the answer's key order, the multi-select hash's, and numbers as written.
func TestQueryKeepsOrderAndNumbers(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"GameSessions[0].CreationTime", `1767225600.500`},
		{"GameSessions[1].CreationTime", `1767225601.0`},
		{"GameSessions[].MaximumPlayerSessionCount", `[ 8, 2 ]`},
		{"sum(GameSessions[].MaximumPlayerSessionCount)", `10`},
		{"length(GameSessions)", `2`},
		{"max_by(GameSessions, &CreationTime).Name", `"alpha"`},
		{"GameSessions[0].{z: Name, a: GameSessionId, m: missing}", `{ "z": "beta", "a": "b", "m": null }`},
		{"GameSessions[0].GameProperties[0]", `{ "Key": "z", "Value": "1" }`},
		{"keys(GameSessions[0])", `[ "GameSessionId", "Name", "CreationTime", "MaximumPlayerSessionCount", "GameProperties" ]`},
		{"merge(GameSessions[0].GameProperties[0], `{\"A\": 1, \"Key\": \"k\"}`)", `{ "Key": "k", "Value": "1", "A": 1 }`},
		{"to_string(GameSessions[1])", `"{\"GameSessionId\":\"a\",\"Name\":\"alpha\",\"CreationTime\":1767225601.0,\"MaximumPlayerSessionCount\":2}"`},
		{"to_string(`\"ü\"`)", `"ü"`},
		{"to_string([`\"ü\"`])", `"[\"\\u00fc\"]"`},
		// Python prints an average as a float (5.0); a computed number is
		// printed as an int when it is whole.
		{"avg(GameSessions[].MaximumPlayerSessionCount)", `5`},
		{"`0.5`", `0.5`},
		{"`1e-7`", `1e-07`},
		{"GameSessions[?MaximumPlayerSessionCount > `4`].Name | [0]", `"beta"`},
		{"NextToken", `"t"`},
		{"nothing", `null`},
	} {
		if got := queryOver(t, sessionsBody, c.expr); got != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
}

// TestQueryRefusesExtensions: the evaluator's extensions beyond the
// JMESPath the aws CLI reads are usage errors, worded as the aws CLI
// words a bad --query.
func TestQueryRefusesExtensions(t *testing.T) {
	for _, expr := range []string{"a-b", "a + b", "-a", "$", "let $x = a in $x", "find_first('abc', 'b')",
		"items(@)", "foo[", "{a: b", "", "[?a == ]", strings.Repeat("[", 10000)} {
		_, err := compileQuery(expr)
		ue, ok := err.(*usageError)
		if !ok || !ue.plain || !strings.HasPrefix(ue.msg, "Bad value for --query "+expr+": ") {
			t.Errorf("%.40q: %v, want a usage error starting \"Bad value for --query\"", expr, err)
		}
	}
}

func TestPythonFloat(t *testing.T) {
	for f, want := range map[float64]string{0.1: "0.1", 1.5: "1.5", 1e16: "1e+16", 1.5e-5: "1.5e-05", 0.0001: "0.0001",
		123456789.125: "123456789.125", 2: "2.0", -0.5: "-0.5", 1e22: "1e+22"} {
		if got := pythonFloat(f); got != want {
			t.Errorf("pythonFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
