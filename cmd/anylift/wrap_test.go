package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/exectest"
)

// TestBinaryDevWrapsAGameWithoutSDK runs the worked example of
// docs/wrapper.md with the real binary: Python's built-in web server, which
// knows nothing of GameLift, hosted by "anylift dev --launch … --wrap".
// A game session starts it on the session's port and is ACTIVE once it
// listens; the server answers there; TerminateGameSession stops it.
func TestBinaryDevWrapsAGameWithoutSDK(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required under CI")
		}
		t.Skip("python3 is not installed")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--tls-listen", "", "--player-listen", "",
		"--data-dir", filepath.Join(dir, "anylift-data"), "--launch", python, "--wrap",
		"--", "-m", "http.server", "{{.GamePort}}", "--bind", "127.0.0.1", "--directory", "{{.LogDirectory}}")
	cmd.Dir = dir
	stdout, stderr := startPiped(t, cmd)
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		go io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			t.Errorf("dev exited with %v; stderr:\n%s", err, stderr.String())
		}
	}()
	sc := bufio.NewScanner(stdout)
	var block strings.Builder
	for sc.Scan() && sc.Text() != "Press Ctrl-C to stop." {
		block.WriteString(sc.Text() + "\n")
	}
	want := fmt.Sprintf("Wrapping 1 x %s (no SDK) through the agent: each game session starts one", python)
	if !strings.Contains(block.String(), want) {
		t.Fatalf("block lacks %q:\n%s\nstderr:\n%s", want, block.String(), stderr.String())
	}
	var endpoint string
	for _, l := range strings.Split(block.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "export AWS_ENDPOINT_URL_GAMELIFT="); ok {
			endpoint = v
		}
	}
	fleet, err := os.ReadFile(filepath.Join(dir, "anylift-data", "dev-fleet-id"))
	if err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) map[string]any {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = []string{"AWS_ENDPOINT_URL_GAMELIFT=" + endpoint}
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("anylift %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("anylift %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return v
	}
	var gs map[string]any
	exectest.Eventually(t, "a wrapped process ready for a session", time.Minute, func() (bool, string) {
		c := exec.Command(bin, "create-game-session", "--fleet-id", strings.TrimSpace(string(fleet)), "--location", "custom-local",
			"--maximum-player-session-count", "4")
		c.Env = []string{"AWS_ENDPOINT_URL_GAMELIFT=" + endpoint}
		out, err := c.CombinedOutput()
		if err != nil {
			return false, string(out) // FleetCapacityExceededException until the wrapper is ready
		}
		var v map[string]map[string]any
		json.Unmarshal(out, &v)
		gs = v["GameSession"]
		return true, ""
	})
	id := gs["GameSessionId"].(string)
	status := func() string {
		return cli("describe-game-sessions", "--game-session-id", id)["GameSessions"].([]any)[0].(map[string]any)["Status"].(string)
	}
	exectest.Eventually(t, "the game session ACTIVE", time.Minute, func() (bool, string) { s := status(); return s == "ACTIVE", s })
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%v/", gs["Port"]))
	if err != nil {
		t.Fatalf("the wrapped game on the session's port: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the wrapped game answered %s", resp.Status)
	}
	cli("terminate-game-session", "--game-session-id", id, "--termination-mode", "TRIGGER_ON_PROCESS_TERMINATE")
	exectest.Eventually(t, "the game session TERMINATED", time.Minute, func() (bool, string) { s := status(); return s == "TERMINATED", s })
}
