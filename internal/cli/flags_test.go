package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/wire"
)

// TestParseCommand: command lines become the request body the server
// reads, for every kind of flag value.
func TestParseCommand(t *testing.T) {
	dir := t.TempDir()
	propsFile := filepath.Join(dir, "props.json")
	os.WriteFile(propsFile, []byte(`[{"Key":"k","Value":"from-file"}]`), 0o644)
	inputFile := filepath.Join(dir, "input.json")
	os.WriteFile(inputFile, []byte(`{"FleetId":"fleet-from-file","MaximumPlayerSessionCount":2,"Name":"n"}`), 0o644)
	tests := []struct {
		op   string
		args []string
		want string
	}{
		{"CreateGameSession", []string{"--fleet-id", "fleet-1", "--maximum-player-session-count", "4", "--name", "g"},
			`{"FleetId":"fleet-1","MaximumPlayerSessionCount":4,"Name":"g"}`},
		{"CreateGameSession", []string{"--maximum-player-session-count=4", "--fleet-id=fleet-1"},
			`{"FleetId":"fleet-1","MaximumPlayerSessionCount":4}`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "4", "--game-properties", "Key=a,Value=b", `Key="c,d",Value='e=f'`},
			`{"MaximumPlayerSessionCount":4,"GameProperties":[{"Key":"a","Value":"b"},{"Key":"c,d","Value":"e=f"}]}`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "4", "--game-properties", `[{"Key":"a","Value":"b"}]`},
			`{"MaximumPlayerSessionCount":4,"GameProperties":[{"Key":"a","Value":"b"}]}`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "4", "--game-properties", `{"Key":"a","Value":"b"}`, "Key=c,Value=d"},
			`{"MaximumPlayerSessionCount":4,"GameProperties":[{"Key":"a","Value":"b"},{"Key":"c","Value":"d"}]}`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "4", "--game-properties", "file://" + propsFile},
			`{"MaximumPlayerSessionCount":4,"GameProperties":[{"Key":"k","Value":"from-file"}]}`},
		{"CreateGameSession", []string{"--cli-input-json", "file://" + inputFile, "--name", "flag-wins"},
			`{"FleetId":"fleet-from-file","MaximumPlayerSessionCount":2,"Name":"flag-wins"}`},
		{"DescribeFleetAttributes", []string{"--fleet-ids", "a", "b", "c", "--limit", "2"},
			`{"FleetIds":["a","b","c"],"Limit":2}`},
		{"DescribeFleetAttributes", []string{"--fleet-ids", "a", "--fleet-ids", "b"},
			`{"FleetIds":["b"]}`},
		{"CreateFleet", []string{"--name", "f", "--resource-creation-limit-policy", "NewGameSessionsPerCreator=3,PolicyPeriodInMinutes=15",
			"--runtime-configuration", `ServerProcesses=[{LaunchPath=/srv/game,ConcurrentExecutions=2}],MaxConcurrentGameSessionActivations=1`},
			`{"Name":"f","RuntimeConfiguration":{"ServerProcesses":[{"LaunchPath":"/srv/game","ConcurrentExecutions":2}],"MaxConcurrentGameSessionActivations":1},"ResourceCreationLimitPolicy":{"NewGameSessionsPerCreator":3,"PolicyPeriodInMinutes":15}}`},
		{"ListCompute", []string{"--fleet-id", "f", "--compute-status", "ACTIVE"},
			`{"FleetId":"f","ComputeStatus":"ACTIVE"}`},
		{"UpdateGameSession", []string{"--game-session-id", "g", "--game-properties", "Key=a,Value=b"},
			`{"GameSessionId":"g","GameProperties":[{"Key":"a","Value":"b"}]}`},
		{"TagResource", []string{"--resource-arn", "arn", "--tags", `[{"Key":"a","Value":"b"}]`},
			`{"ResourceARN":"arn","Tags":[{"Key":"a","Value":"b"}]}`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			g := &globals{}
			in, err := parseCommand(commands[tt.op], tt.args, g)
			if err != nil {
				t.Fatal(err)
			}
			body, err := encodeInput(in)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tt.want {
				t.Errorf("body = %s\nwant   %s", body, tt.want)
			}
			// The server reads the body back into the same shape.
			back := commands[tt.op].Input()
			if err := wire.Decode(wire.JSON, body, back); err != nil || !reflect.DeepEqual(back, in) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// TestBooleanFlags: --flag sets true, --no-flag sets false, neither sends
// nothing.
func TestBooleanFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--fleet-id f --game-session-id g":                        `{"FleetId":"f","GameSessionId":"g"}`,
		"--fleet-id f --game-session-id g --no-dry-run":           `{"FleetId":"f","GameSessionId":"g","DryRun":false}`,
		"--fleet-id f --game-session-id g --dry-run":              `{"FleetId":"f","GameSessionId":"g","DryRun":true}`,
		"--fleet-id f --game-session-id g --dry-run=false":        `{"FleetId":"f","GameSessionId":"g","DryRun":false}`,
		"--dry-run --no-dry-run --fleet-id f --game-session-id g": `{"FleetId":"f","GameSessionId":"g","DryRun":false}`,
	} {
		c := boolCommand(t)
		in, err := parseCommand(c, strings.Fields(args), &globals{})
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		body, _ := encodeInput(in)
		if string(body) != want {
			t.Errorf("%s: body = %s, want %s", args, body, want)
		}
	}
}

// boolCommand is a command with a boolean member: the model's served
// operations have none yet, so one is made over a wire shape that has.
func boolCommand(t *testing.T) *command {
	type in struct {
		FleetId       *string `json:"FleetId,omitzero"`
		GameSessionId *string `json:"GameSessionId,omitzero"`
		DryRun        *bool   `json:"DryRun,omitzero"`
	}
	return &command{Name: "x", Op: "X", Input: func() any { return new(in) }, Params: []param{
		{Flag: "fleet-id", Member: "FleetId", Type: "string"},
		{Flag: "game-session-id", Member: "GameSessionId", Type: "string"},
		{Flag: "dry-run", Member: "DryRun", Type: "boolean"},
	}}
}

// TestParseCommandErrors: unreadable command lines are usage errors,
// values that do not fit are parameter errors, each worded for the user.
func TestParseCommandErrors(t *testing.T) {
	tests := []struct {
		op    string
		args  []string
		usage bool
		want  string
	}{
		{"CreateGameSession", []string{"--fleet-id", "f"}, true, "the following arguments are required: --maximum-player-session-count"},
		{"CreateGameSession", []string{"--maximum-player-session-count"}, true, "argument --maximum-player-session-count: expected one argument"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--bogus", "x"}, true, "Unknown options: --bogus"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "stray"}, true, "Unknown options: stray"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "x"}, false,
			"Invalid type for parameter MaximumPlayerSessionCount, value: x, type: string, valid types: integer"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "99999999999"}, false,
			"Invalid type for parameter MaximumPlayerSessionCount, value: 99999999999, type: string, valid types: integer"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--game-properties", "Key=a"}, false,
			`Missing required parameter in GameProperties[0]: "Value"`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--game-properties", "Key=a,Value=b,Extra=c"}, false,
			`Unknown parameter in GameProperties[0]: "Extra", must be one of: Key, Value`},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--game-properties", "Key=[a"}, true,
			"Error parsing parameter '--game-properties': error parsing shorthand"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--game-properties", `[{"Key":`}, true,
			"Error parsing parameter '--game-properties': invalid JSON"},
		{"CreateGameSession", []string{"--maximum-player-session-count", "1", "--name", "file:///nonexistent/x"}, true,
			"unable to load paramfile"},
		{"CreateFleet", []string{"--name", "f", "--resource-creation-limit-policy", `{"PolicyPeriodInMinutes":"5"}`}, false,
			"Invalid type for parameter ResourceCreationLimitPolicy.PolicyPeriodInMinutes, value: 5, type: string, valid types: integer"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseCommand(commands[tt.op], tt.args, &globals{})
			if err == nil {
				t.Fatal("accepted")
			}
			var ue *usageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("usage error = %v, want %v (%v)", !tt.usage, tt.usage, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseShorthand(t *testing.T) {
	tests := map[string]string{
		"Key=a,Value=b":                  `{"Key":"a","Value":"b"}`,
		" Key = a , Value = b ":          `{"Key":"a","Value":"b"}`,
		"L=[a,b,c],E=[]":                 `{"E":[],"L":["a","b","c"]}`,
		"S={A=1,B={C=2}}":                `{"S":{"A":"1","B":{"C":"2"}}}`,
		`Q="a,b",R='c\'d',T=`:            `{"Q":"a,b","R":"c'd","T":""}`,
		"L=[{K=a},{K=b}]":                `{"L":[{"K":"a"},{"K":"b"}]}`,
		"Path=/srv/game server,Arg=-x=1": `{"Arg":"-x=1","Path":"/srv/game server"}`,
	}
	for in, want := range tests {
		got, err := parseShorthand(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != want {
			t.Errorf("%q = %s, want %s", in, b, want)
		}
	}
	for _, bad := range []string{"", "=a", "K", "K=[a", "K={A=1", `K="a`, "K=a,K=b", "K=a]", "K=[a}"} {
		if _, err := parseShorthand(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestEveryServedOperationHasACommand: the CLI offers exactly the served
// operations, each with its input shape's members as flags.
func TestEveryServedOperationHasACommand(t *testing.T) {
	for name, c := range served() {
		in := reflect.TypeOf(c.Input()).Elem()
		if in.NumField() != len(c.Params) {
			t.Errorf("%s: %d flags for %d members", name, len(c.Params), in.NumField())
		}
		for _, p := range c.Params {
			if _, ok := in.FieldByName(p.Member); !ok {
				t.Errorf("%s --%s: no member %s", name, p.Flag, p.Member)
			}
		}
	}
	if _, ok := served()["create-game-session"]; !ok {
		t.Error("create-game-session not offered")
	}
	if got, want := len(served()), len(api.Operations()); got != want {
		t.Errorf("%d commands offered for %d served operations", got, want)
	}
}
