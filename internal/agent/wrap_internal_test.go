package agent

import (
	"reflect"
	"testing"
)

func TestWrapTemplates(t *testing.T) {
	s := Session{GamePort: 7777, GameSessionId: "gs-1", Property: map[string]string{"mode": "ctf", "map-name": "dust"},
		GameProperties: `{"mode":"ctf"}`}
	for _, tc := range []struct {
		params    string
		args, env []string
	}{
		{"-port {{.GamePort}}", []string{"-port", "7777"}, nil},
		{"PORT={{.GamePort}} 'TITLE=a {{.Property.mode}} game' -p {{.GamePort}} X=1",
			[]string{"-p", "7777", "X=1"}, []string{"PORT=7777", "TITLE=a ctf game"}},
		// A template with spaces is quoted, as any word with spaces.
		{`--map '{{index .Property "map-name"}}' --missing "{{.Property.nokey}}" --props {{.GameProperties}}`,
			[]string{"--map", "dust", "--missing", "", "--props", `{"mode":"ctf"}`}, nil},
		{"ONLY=env", nil, []string{"ONLY=env"}},
	} {
		words, err := SplitParameters(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := parseTemplates(words)
		if err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		args, env, err := tmpl.expand(s)
		if err != nil || !reflect.DeepEqual(args, tc.args) || !reflect.DeepEqual(env, tc.env) {
			t.Errorf("%s: args %q env %q err %v; want %q %q", tc.params, args, env, err, tc.args, tc.env)
		}
	}
	for _, bad := range []string{"-port {{.GamePort", "'unclosed", "-x {{.NoSuchField}}"} {
		if err := CheckWrap(bad); err == nil && bad != "-x {{.NoSuchField}}" {
			t.Errorf("CheckWrap(%q) accepted it", bad)
		}
	}
	tmpl, _ := parseTemplates([]string{"{{.NoSuchField}}"})
	if _, _, err := tmpl.expand(s); err == nil {
		t.Error("a field Session lacks expanded without an error")
	}
}

const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1E61 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C40 0100007F:1E61 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
`

func TestSocketOnPort(t *testing.T) {
	for _, tc := range []struct {
		port int
		want bool
	}{{7777, true}, {40000, false}, {1, false}} {
		if got := socketOnPort([]byte(procNetTCP), tc.port, "0A"); got != tc.want {
			t.Errorf("port %d: %v", tc.port, got)
		}
	}
}

func FuzzSocketOnPort(f *testing.F) {
	f.Add([]byte(procNetTCP), 7777)
	f.Fuzz(func(t *testing.T, table []byte, port int) {
		socketOnPort(table, port, "0A")
	})
}
