package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/cli"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/extapi"
	sdk "github.com/anylift/anylift/sdk/server"
)

var serverParams = regexp.MustCompile(`-websocketurl (\S+) -authtoken (\S+) -hostid (\S+) -fleetid (\S+)`)

// TestBinaryDevStatusAndFaults: against the real "anylift dev", with a Go
// SDK game server connected: dev's terminal gets a status line, "anylift
// dev status" and "anylift status" show the process, and "anylift fault"
// injects, lists and clears faults that a real client then meets.
func TestBinaryDevStatusAndFaults(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--tls-listen", "", "--player-listen", "", "--data-dir", dir,
		"--status-interval", "50ms")
	cmd.Env = append(os.Environ(), "ANYLIFT_CONFIG=")
	devErr := &exectest.SyncBuffer{}
	cmd.Stderr = devErr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var block strings.Builder
	for sc.Scan() && sc.Text() != "Press Ctrl-C to stop." {
		block.WriteString(sc.Text() + "\n")
	}
	go io.Copy(io.Discard, stdout)
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait() })
	m := serverParams.FindStringSubmatch(block.String())
	if m == nil {
		t.Fatalf("no game server parameters in:\n%s", block.String())
	}
	wsURL, token, host, fleet := m[1], m[2], m[3], m[4]
	endpoint := "http://" + strings.TrimPrefix(wsURL, "ws://")

	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: wsURL, ProcessID: "game-1", HostID: host, FleetID: fleet, AuthToken: token},
		sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1, HealthCheckInterval: time.Hour,
			ReconnectMin: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	if err := p.ProcessReady(sdk.ProcessParameters{Port: 7777, OnStartGameSession: func(sdk.GameSession) {}, OnProcessTerminate: func() {}}); err != nil {
		t.Fatal(err)
	}

	exectest.Eventually(t, "dev's status line", 20*time.Second, func() (bool, string) {
		return strings.Contains(devErr.String(), " status: 1 server process (1 ready), 0 game sessions, 0 players\n"), devErr.String()
	})

	env := map[string]string{"ANYLIFT_ENDPOINT": endpoint, "ANYLIFT_DATA_DIR": dir}
	anylift := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, errOut, err := anylift(args...)
		if err != nil {
			t.Fatalf("anylift %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}

	out := mustRun("dev", "status")
	for _, want := range []string{"Fleet " + fleet + " anylift-dev ACTIVE, locations custom-local", "local    custom-local  127.0.0.1",
		"game-1   local    ACTIVE  healthy", "no game sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("anylift dev status does not show %q:\n%s", want, out)
		}
	}
	var st extapi.DescribeStatusOutput
	if err := json.Unmarshal([]byte(mustRun("status", "--fleet-id", fleet, "--output", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Fleets) != 1 || !st.Fleets[0].FaultInjection || len(st.Fleets[0].Processes) != 1 ||
		st.Fleets[0].Processes[0].ProcessId != "game-1" {
		t.Fatalf("status --output json: %+v", st)
	}

	// A placement failure, met by the next CreateGameSession.
	out = mustRun("fault", "fail-placements", "--count", "1")
	if !strings.Contains(out, "PLACEMENT_FAILURE on fleet "+fleet+"\nin force: once more") {
		t.Errorf("fail-placements printed:\n%s", out)
	}
	_, errOut, err := anylift("create-game-session", "--fleet-id", fleet, "--location", "custom-local", "--maximum-player-session-count", "2")
	var exit *cli.ExitError
	if !errors.As(err, &exit) || exit.Code != 254 || !strings.Contains(errOut, "(FleetCapacityExceededException)") ||
		!strings.Contains(errOut, "injected by Anylift fault") {
		t.Errorf("create-game-session under the fault: %v\n%s", err, errOut)
	}
	if out := mustRun("fault", "list"); out != "No faults in force.\n" {
		t.Errorf("list after the fault was used up:\n%s", out)
	}

	// A dropped connection: the SDK comes back.
	if out := mustRun("fault", "drop-connection", "--process-id", "game-1"); !strings.Contains(out, "acted on 1: game-1") {
		t.Errorf("drop-connection printed:\n%s", out)
	}
	exectest.Eventually(t, "the process back", 20*time.Second, func() (bool, string) {
		out := mustRun("status", "--fleet-id", fleet)
		return strings.Contains(out, "game-1   local    ACTIVE  healthy"), out
	})

	mustRun("fault", "miss-health-checks", "--duration", "10m")
	if out := mustRun("fault", "list"); !strings.Contains(out, "MISS_HEALTH_CHECKS") || !strings.Contains(out, "until ") {
		t.Errorf("list:\n%s", out)
	}
	if out := mustRun("fault", "clear"); !strings.Contains(out, "cleared fault-") || !strings.Contains(out, "MISS_HEALTH_CHECKS") {
		t.Errorf("clear:\n%s", out)
	}

	if !strings.Contains(devErr.String(), `msg="fault injected: a test, not a real failure"`) {
		t.Errorf("dev's terminal does not say a fault was injected:\n%s", devErr.String())
	}
	for _, bad := range [][]string{{"fault", "meteor"}, {"fault", "fail-placements"}, {"fault", "fail-placements", "--process-id", "x", "--count", "1"}} {
		_, errOut, err := anylift(bad...)
		if !errors.As(err, &exit) || exit.Code < 252 {
			t.Errorf("anylift %v: %v\n%s", bad, err, errOut)
		}
	}
}
