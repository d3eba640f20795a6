package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/wire"
)

// FuzzFlagValue: any value given to any kind of flag either fails with a
// message or yields an input the server decodes back into the same shape;
// nothing panics.
func FuzzFlagValue(f *testing.F) {
	for _, s := range []string{
		"Key=a,Value=b", `{"Key":"a","Value":"b"}`, `[{"Key":"a"}]`, "L=[a,{b=c}]", `Q="x\"y"`,
		"NewGameSessionsPerCreator=3", "ServerProcesses=[{LaunchPath=/a,ConcurrentExecutions=2}]",
		"4", "-1", "1e3", "true", "", "[", "{", "K={A=[{B=1}]}", `"`, "K='", "a,b", "2026-01-02T03:04:05Z",
	} {
		f.Add(s)
	}
	c := commands["CreateFleet"]
	f.Fuzz(func(t *testing.T, v string) {
		if strings.HasPrefix(v, "file") {
			return // file:// and fileb:// read the machine's files
		}
		for i := range c.Params {
			p := &c.Params[i]
			in := c.Input()
			f := reflect.ValueOf(in).Elem().FieldByName(p.Member)
			e := &paramError{}
			if err := setMember(f, p, []string{v}, e); err != nil || len(e.problems) > 0 {
				continue
			}
			body, err := encodeInput(in)
			if err != nil {
				t.Fatalf("--%s %q: encoding: %v", p.Flag, v, err)
			}
			back := c.Input()
			if err := wire.Decode(wire.JSON, body, back); err != nil {
				t.Fatalf("--%s %q: the server cannot read %s: %v", p.Flag, v, body, err)
			}
		}
	})
}

// FuzzShorthand: the shorthand parser never panics, and what it accepts
// holds only maps, lists and strings.
func FuzzShorthand(f *testing.F) {
	for _, s := range []string{"Key=a,Value=b", "L=[a,b],S={A=1}", `Q='a\'b'`, "K=[[[", "K={", "=", ",", "K=a,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseShorthand(s)
		if err != nil {
			return
		}
		var check func(any)
		check = func(x any) {
			switch v := x.(type) {
			case map[string]any:
				for _, el := range v {
					check(el)
				}
			case []any:
				for _, el := range v {
					check(el)
				}
			case string:
			default:
				t.Fatalf("%q: value of type %T", s, x)
			}
		}
		check(m)
	})
}

// FuzzAnswer: any answer body prints in every format without panicking.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{`{"FleetAttributes":[{"FleetId":"f","CreationTime":1.5,"MetricGroups":["a"]}]}`, `{}`, `[`, `{"x":{"y":[[1,[2]]]}}`} {
		f.Add(s)
	}
	out := reflect.TypeOf(commands["DescribeFleetAttributes"].Output())
	f.Fuzz(func(t *testing.T, s string) {
		tree, err := readAnswer([]byte(s), out)
		if err != nil {
			return
		}
		var sink discard
		writeJSON(sink, tree)
		writeText(sink, tree)
		writeTable(sink, "DescribeFleetAttributes", tree)
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzQuery: any --query either compiles or is a usage error, and a
// compiled one runs over an answer, printing in every format, without
// panicking.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"FleetAttributes[0].FleetId", "FleetAttributes[].{a: FleetId, b: MetricGroups}",
		"length(FleetAttributes)", "FleetAttributes[?CreationTime > `1`] | [0]", "merge(@, `{\"z\": 1}`)",
		"to_string(@)", "keys(@)", "foo[", "a-b", "$", "let $x = 1 in $x", "FleetAttributes[::-1]", "sort_by(FleetAttributes, &Name)"} {
		f.Add(s)
	}
	out := reflect.TypeOf(commands["DescribeFleetAttributes"].Output())
	tree, err := readAnswer([]byte(`{"FleetAttributes":[{"FleetId":"f","Name":"ü","CreationTime":1.5,"MetricGroups":["a"]},{"FleetId":"g","CreationTime":2}]}`), out)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := compileQuery(s)
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %T %v, want a usage error", s, err, err)
			}
			return
		}
		res, err := q.apply(tree)
		if err != nil {
			return
		}
		var sink discard
		writeJSON(sink, res)
		writeText(sink, res)
		writeTable(sink, "DescribeFleetAttributes", res)
	})
}
