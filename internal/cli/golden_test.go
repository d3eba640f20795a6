package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/cli"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	sdk "github.com/anylift/anylift/sdk/server"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output")

// goldenEnv is a real server on 127.0.0.1:0 with a frozen clock, and the
// CLI pointed at it. The clock stands at a whole second of today plus
// 678 ms: close enough to the real time for SigV4's 15-minute window, and
// every timestamp is ten digits and ".678", so columns keep their widths.
type goldenEnv struct {
	*apitest.Env
	norm *normalizer
}

func startGolden(t *testing.T) *goldenEnv {
	t.Helper()
	frozen := time.Now().Truncate(time.Second).Add(678 * time.Millisecond)
	env := apitest.Start(t, func(c *server.Config) { c.Now = func() time.Time { return frozen } })
	n := newNormalizer()
	n.base = frozen.Unix()
	n.addrs = []string{strings.TrimPrefix(env.URL, "http://"), strings.TrimPrefix(env.Server.SDKEndpoint(), "ws://")}
	return &goldenEnv{Env: env, norm: n}
}

// run runs "anylift <args>" against the server and returns its stdout,
// stderr and exit status.
func (e *goldenEnv) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	env := map[string]string{
		"ANYLIFT_ENDPOINT":      e.URL,
		"AWS_ACCESS_KEY_ID":     apitest.AccessKey,
		"AWS_SECRET_ACCESS_KEY": apitest.SecretKey,
	}
	var out, errOut bytes.Buffer
	err := cli.Run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	code := 0
	var exit *cli.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("anylift %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// golden runs args, checks the exit status and compares the normalised
// stdout and stderr with testdata/<name>.golden.
func (e *goldenEnv) golden(t *testing.T, name string, wantCode int, args ...string) string {
	t.Helper()
	out, errOut, code := e.run(t, args...)
	if code != wantCode {
		t.Errorf("anylift %v: exit %d, want %d; stderr:\n%s", args, code, wantCode, errOut)
	}
	got := "$ anylift " + strings.Join(args, " ") + "\n" + out
	if errOut != "" {
		got += "--- stderr\n" + errOut
	}
	compareGolden(t, name, e.norm.apply(got))
	return out
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// normalizer replaces volatile values with stable ones of the same length
// (so table columns keep their widths): each UUID by a numbered one in the
// order first seen, and each registered secret by x's.
type normalizer struct {
	uuids   map[string]string
	secrets []string
	addrs   []string // listener addresses, replaced by 127.0.0.1:PORT
	base    int64    // the frozen clock's second: timestamps become 1767225600 + their offset from it
}

var epochRE = regexp.MustCompile(`\b1[0-9]{9}\b`)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func newNormalizer() *normalizer { return &normalizer{uuids: map[string]string{}} }

func (n *normalizer) apply(s string) string {
	for _, sec := range n.secrets {
		s = strings.ReplaceAll(s, sec, strings.Repeat("x", len(sec)))
	}
	for _, a := range n.addrs {
		s = strings.ReplaceAll(s, a, "127.0.0.1:PORT")
	}
	if n.base != 0 {
		s = epochRE.ReplaceAllStringFunc(s, func(v string) string {
			var sec int64
			fmt.Sscan(v, &sec)
			return fmt.Sprint(1767225600 + sec - n.base)
		})
	}
	return uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if r, ok := n.uuids[u]; ok {
			return r
		}
		r := fmt.Sprintf("00000000-0000-0000-0000-%012d", len(n.uuids)+1)
		n.uuids[u] = r
		return r
	})
}

func jsonField(t *testing.T, out string, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	for _, k := range path {
		v = v.(map[string]any)[k]
	}
	return fmt.Sprint(v)
}

// TestGolden drives a fleet's life through the CLI: a location, an Anywhere
// fleet, a compute with a real Go SDK server process, a game session, and
// errors, in every output format, pinned in testdata/*.golden.
func TestGolden(t *testing.T) {
	e := startGolden(t)
	e.golden(t, "create-location", 0, "create-location", "--location-name", "custom-golden", "--tags", "Key=team,Value=blue")
	out := e.golden(t, "create-fleet", 0, "create-fleet", "--name", "golden", "--compute-type", "ANYWHERE",
		"--locations", `[{"Location":"custom-golden"}]`, "--metric-groups", "golden-group",
		"--resource-creation-limit-policy", "NewGameSessionsPerCreator=3,PolicyPeriodInMinutes=15")
	fleet := jsonField(t, out, "FleetAttributes", "FleetId")
	e.golden(t, "describe-fleet-attributes.json", 0, "describe-fleet-attributes", "--fleet-ids", fleet)
	e.golden(t, "describe-fleet-attributes.table", 0, "describe-fleet-attributes", "--fleet-ids", fleet, "--output", "table")
	e.golden(t, "describe-fleet-attributes.text", 0, "--output", "text", "describe-fleet-attributes", "--fleet-ids", fleet)
	e.golden(t, "create-fleet.table", 0, "create-fleet", "--output", "table", "--name", "second", "--compute-type", "ANYWHERE",
		"--locations", "Location=custom-golden", "--tags", "Key=a,Value=1", "Key=b,Value=2")
	e.golden(t, "register-compute", 0, "register-compute", "--fleet-id", fleet, "--compute-name", "golden-host",
		"--ip-address", "127.0.0.1", "--location", "custom-golden")
	out, _, _ = e.run(t, "get-compute-auth-token", "--fleet-id", fleet, "--compute-name", "golden-host")
	token := jsonField(t, out, "AuthToken")
	e.norm.secrets = append(e.norm.secrets, token)

	startProcess(t, e, fleet, token)
	out = e.golden(t, "create-game-session", 0, "create-game-session", "--fleet-id", fleet,
		"--maximum-player-session-count", "4", "--name", "golden-game", "--creator-id", "player-1", "--location", "custom-golden",
		"--game-properties", "Key=mode,Value=ffa", `{"Key":"map","Value":"dust"}`)
	session := jsonField(t, out, "GameSession", "GameSessionId")
	waitActive(t, e, session)
	e.golden(t, "describe-game-sessions.json", 0, "describe-game-sessions", "--game-session-id", session)
	e.golden(t, "describe-game-sessions.table", 0, "describe-game-sessions", "--fleet-id", fleet, "--output", "table")
	e.golden(t, "create-player-session", 0, "create-player-session", "--game-session-id", session, "--player-id", "alice", "--output", "text")
	e.golden(t, "error-not-found", cli.ExitService, "describe-game-sessions", "--fleet-id", "fleet-00000000-0000-0000-0000-000000000099")
	e.golden(t, "error-service-validation", cli.ExitService, "create-game-session", "--fleet-id", fleet, "--maximum-player-session-count", "-1")
	e.golden(t, "error-missing-required", cli.ExitUsage, "create-game-session", "--fleet-id", fleet)
	e.golden(t, "error-param-type", cli.ExitUsage, "create-game-session", "--fleet-id", fleet,
		"--maximum-player-session-count", "four", "--game-properties", `{"Key":1}`)
	e.golden(t, "error-unknown-operation", cli.ExitUsage, "create-gme-session")
	testPaging(t, e)
	testQuery(t, e, fleet)
	e.run(t, "create-location", "--location-name", "custom-unused")
	e.golden(t, "delete-location-empty-answer", 0, "delete-location", "--location-name", "custom-unused")
}

// testPaging pins the aws CLI's paging over ListLocations: pages of one,
// --max-items with its resume token, and --starting-token from it.
func testPaging(t *testing.T, e *goldenEnv) {
	t.Helper()
	for _, name := range []string{"custom-page-a", "custom-page-b", "custom-page-c"} {
		e.run(t, "create-location", "--location-name", name)
	}
	e.golden(t, "paging-all", 0, "list-locations", "--filters", "CUSTOM", "--page-size", "1")
	out := e.golden(t, "paging-max-items", 0, "list-locations", "--page-size", "2", "--max-items", "3")
	e.golden(t, "paging-max-items.text", 0, "list-locations", "--page-size", "2", "--max-items", "3", "--output", "text")
	e.golden(t, "paging-starting-token", 0, "list-locations", "--page-size", "2", "--starting-token", jsonField(t, out, "NextToken"))
	e.golden(t, "paging-own-limit", 0, "list-locations", "--limit", "1")
	e.golden(t, "paging-refused", cli.ExitUsage, "list-locations", "--limit", "1", "--max-items", "2")
}

// testQuery pins --query in every output format, with and without paging,
// and its errors.
func testQuery(t *testing.T, e *goldenEnv, fleet string) {
	t.Helper()
	e.golden(t, "query-scalar.text", 0, "describe-fleet-attributes", "--fleet-ids", fleet,
		"--query", "FleetAttributes[0].FleetId", "--output", "text")
	e.golden(t, "query-scalar.json", 0, "describe-fleet-attributes", "--fleet-ids", fleet, "--query", "FleetAttributes[0].CreationTime")
	e.golden(t, "query-field-of-list.text", 0, "describe-fleet-attributes", "--query", "FleetAttributes.FleetId", "--output", "text")
	e.golden(t, "query-projection.json", 0, "describe-game-sessions", "--fleet-id", fleet, "--query", "GameSessions[].GameSessionId")
	hash := "sort_by(FleetAttributes, &Name)[].{Id: FleetId, Name: Name, Groups: MetricGroups, Limit: ResourceCreationLimitPolicy}"
	e.golden(t, "query-hash.json", 0, "describe-fleet-attributes", "--query", hash)
	e.golden(t, "query-hash.text", 0, "describe-fleet-attributes", "--query", hash, "--output", "text")
	e.golden(t, "query-hash.table", 0, "describe-fleet-attributes", "--query", hash, "--output", "table")
	e.golden(t, "query-functions.json", 0, "describe-game-sessions", "--fleet-id", fleet, "--query",
		"{count: length(GameSessions), keys: keys(GameSessions[0].GameProperties[0]), merged: merge(GameSessions[0].GameProperties[0], `{\"Extra\": 1.5}`), text: to_string(GameSessions[0].GameProperties)}")
	e.golden(t, "query-filter.text", 0, "list-locations", "--filters", "CUSTOM", "--page-size", "2", "--output", "text",
		"--query", "Locations[?starts_with(LocationName, 'custom-page')].LocationName")
	e.golden(t, "query-paged.text", 0, "list-locations", "--page-size", "2", "--max-items", "3", "--output", "text",
		"--query", "Locations[].LocationName")
	e.golden(t, "query-paged.json", 0, "list-locations", "--page-size", "2", "--max-items", "3",
		"--query", "{names: Locations[].LocationName, next: NextToken}")
	e.golden(t, "error-query-syntax", cli.ExitUsage, "list-locations", "--query", "Locations[")
	e.golden(t, "error-query-empty", cli.ExitUsage, "list-locations", "--query=")
	e.golden(t, "error-query-extension", cli.ExitUsage, "list-locations", "--query", "Locations[0].Location-Name")
	e.golden(t, "error-query-function", cli.ExitUsage, "list-locations", "--query", "find_first(Locations, 'x')")
	e.golden(t, "error-query-type", cli.ExitQuery, "list-locations", "--query", "length(`1`)")
}

// waitActive waits, through the CLI, until the process has activated the
// game session.
func waitActive(t *testing.T, e *goldenEnv, session string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		out, _, _ := e.run(t, "describe-game-sessions", "--game-session-id", session, "--output", "text")
		if strings.Contains(out, "\tACTIVE\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("game session %s never became ACTIVE: %s", session, out)
		}
		<-tick.C
	}
}

// startProcess runs a Go SDK server process on the compute that activates
// every game session, and waits until the service counts it as ready.
func startProcess(t *testing.T, e *goldenEnv, fleet, token string) {
	t.Helper()
	proc, err := sdk.Init(sdk.ServerParameters{WebSocketURL: e.Server.SDKEndpoint(), ProcessID: "golden-proc",
		HostID: "golden-host", FleetID: fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Destroy() })
	err = proc.ProcessReady(sdk.ProcessParameters{Port: 7777,
		OnStartGameSession: func(sdk.GameSession) { proc.ActivateGameSession() }, OnProcessTerminate: func() {}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		healthy := false
		err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
			list, _, err := tx.ListProcesses("", game.ProcessActive, store.Page{Limit: 10})
			for _, p := range list {
				healthy = healthy || p.Healthy
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if healthy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server process never reported health")
		}
		<-tick.C
	}
}

// TestGoldenHelp pins the usage listing and the help of two operations.
func TestGoldenHelp(t *testing.T) {
	e := &goldenEnv{Env: &apitest.Env{URL: "http://127.0.0.1:1"}, norm: newNormalizer()}
	e.golden(t, "help-usage", 0, "--help")
	e.golden(t, "help-create-game-session", 0, "create-game-session", "--help")
	e.golden(t, "help-create-fleet", 0, "create-fleet", "help")
	e.golden(t, "help-describe-game-sessions", 0, "describe-game-sessions", "--help")
}
