package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDevAndAgentRefuseBadFlags: mistakes are refused before anything
// starts, with messages that name the flag.
func TestDevAndAgentRefuseBadFlags(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dev", "--count", "0", "--launch", "x"}, "--count must be 1 to 50"},
		{[]string{"dev", "--", "-port", "7777"}, "arguments after -- are for --launch"},
		{[]string{"dev", "stray"}, `unexpected argument "stray"`},
		{[]string{"dev", "--launch", "/nonexistent/gameserver"}, "--launch /nonexistent/gameserver: not an executable file"},
		{[]string{"agent", "--location", "custom-x", "--ip-address", "10.0.0.1"}, "the fleet id is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--ip-address", "10.0.0.1"}, "the location is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--location", "custom-x"}, "IP address is required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--location", "custom-x", "--ip-address", "10.0.0.1"}, "credentials are required"},
		{[]string{"agent", "--fleet-id", "fleet-1", "--location", "custom-x", "--ip-address", "10.0.0.1", "--access-key", "a", "--secret-key", "s",
			"--local-sdk-listen", "0.0.0.0:0"}, "must be on the loopback interface"},
		{[]string{"agent", "--wrap", "--wrap-ports", "9000-8000"}, "--wrap-ports \"9000-8000\": want FROM-TO within 1-60000"},
		{[]string{"agent", "--wrap", "--wrap-activate", "soon"}, "--wrap-activate must be listen or start"},
		{[]string{"dev", "--wrap"}, "--wrap wraps the game binary of --launch, which is not set"},
		{[]string{"dev", "--launch", "/bin/sh", "--wrap", "--", "-port", "{{.GamePort"}, "the arguments after --, as the wrapper's templates"},
	} {
		err := run(context.Background(), tc.args, none, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestDevAndAgentHelp(t *testing.T) {
	for _, cmd := range []string{"dev", "agent"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{cmd, "-h"}, func(string) string { return "" }, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "usage: anylift "+cmd) {
			t.Errorf("%s -h:\n%s", cmd, out.String())
		}
	}
}

// TestBinaryDevStopsOnSignal: the real binary prints the block, the CLI
// works with its printed endpoint alone, and SIGINT (Ctrl-C) stops it
// cleanly.
func TestBinaryDevStopsOnSignal(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--tls-listen", "", "--player-listen", "127.0.0.1:0", "--data-dir", dir)
	stdout, stderr := startPiped(t, cmd)
	sc := bufio.NewScanner(stdout)
	var block strings.Builder
	for sc.Scan() {
		block.WriteString(sc.Text() + "\n")
		if sc.Text() == "Press Ctrl-C to stop." {
			break
		}
	}
	if !strings.Contains(block.String(), "GAMELIFT_SDK_FLEET_ID=fleet-") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("block:\n%s\nstderr:\n%s", block.String(), stderr.String())
	}
	// The block's exported endpoint is enough for the anylift CLI: with no
	// credentials it uses dev's pair on a local endpoint.
	var endpoint string
	for _, l := range strings.Split(block.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "export AWS_ENDPOINT_URL_GAMELIFT="); ok {
			endpoint = v
		}
	}
	cli := exec.Command(bin, "describe-fleet-attributes", "--output", "text")
	cli.Env = []string{"AWS_ENDPOINT_URL_GAMELIFT=" + endpoint}
	if out, err := cli.CombinedOutput(); err != nil || !strings.Contains(string(out), "anylift-dev") {
		t.Errorf("anylift describe-fleet-attributes at %q: %v\n%s", endpoint, err, out)
	}
	// A second dev on the same data directory exits at once, naming the
	// directory and the process that holds it.
	second := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--tls-listen", "", "--player-listen", "", "--data-dir", dir)
	second.Env = append(os.Environ(), "ANYLIFT_CONFIG=")
	out, err := second.CombinedOutput()
	want := fmt.Sprintf("data directory %s is in use by another anylift (pid %d): stop it first, or give another --data-dir", dir, cmd.Process.Pid)
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("second anylift dev on %s: %v\n%s\nwant %q", dir, err, out, want)
	}
	cmd.Process.Signal(syscall.SIGINT)
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
	}
}

// TestBinaryDevShowsACrashLoop: under "anylift dev --launch", at its
// default log level, a game server that fails at once shows in the
// terminal as a crash, with its last lines of output.
func TestBinaryDevShowsACrashLoop(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "broken-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"fatal: cannot open map $1\" >&2\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--tls-listen", "", "--player-listen", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "data"), "--launch", script, "--", "arena.map")
	cmd.Env = append(os.Environ(), "ANYLIFT_CONFIG=")
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGINT)
	var seen strings.Builder
	crash, output := false, false
	sc := bufio.NewScanner(stderr)
	for !(crash && output) && sc.Scan() {
		l := sc.Text()
		seen.WriteString(l + "\n")
		crash = crash || strings.Contains(l, `level=WARN msg="server process crashed; next launch delayed"`) && strings.Contains(l, "event=SERVER_PROCESS_CRASHED")
		output = output || strings.Contains(l, `stream=stderr line="fatal: cannot open map arena.map"`)
	}
	if !crash || !output {
		t.Fatalf("dev's terminal does not show the crash and its output:\n%s", seen.String())
	}
	go io.Copy(io.Discard, stderr)
}
