// Package deploy holds no Go code: its tests check the deployment files
// beside them (systemd units, the image recipes, the Compose files).
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool returns the path of a tool the test runs; without it the test
// is skipped.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return path
}

// The units pass "systemd-analyze verify", and their exposure, as
// "systemd-analyze security" rates the sandboxing, stays under a ceiling
// (anylift serve: 2.0; the agent, whose game servers need more: 3.5; 10
// is no sandboxing; --threshold takes tenths). verify needs the ExecStart binary to exist, so the
// units are checked as copies naming an executable stub instead of
// /usr/local/bin/anylift.
func TestSystemdUnits(t *testing.T) {
	analyze := needTool(t, "systemd-analyze")
	dir := t.TempDir()
	stub := filepath.Join(dir, "anylift")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ceilings := map[string]string{"anylift.service": "20", "anylift-agent.service": "35"}
	var units []string
	for name, ceiling := range ceilings {
		b, err := os.ReadFile(filepath.Join("systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.Contains(text, "ExecStart=/usr/local/bin/anylift ") {
			t.Fatalf("%s: ExecStart does not run /usr/local/bin/anylift", name)
		}
		unit := filepath.Join(dir, name)
		if err := os.WriteFile(unit, []byte(strings.ReplaceAll(text, "/usr/local/bin/anylift", stub)), 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, unit)
		out, err := exec.Command(analyze, "security", "--offline=true", "--threshold="+ceiling, unit).CombinedOutput()
		if err != nil {
			t.Errorf("systemd-analyze security %s (ceiling %s tenths): %v\n%s", name, ceiling, err, out)
		}
	}
	cmd := exec.Command(analyze, append([]string{"verify"}, units...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The agent's user is made by systemd-sysusers from the file shipped
// beside the unit (checked in a scratch root, nothing written).
func TestSysusersFile(t *testing.T) {
	sysusers := needTool(t, "systemd-sysusers")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	file, err := filepath.Abs(filepath.Join("systemd", "anylift-agent.sysusers.conf"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sysusers, "--root="+root, "--dry-run", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Creating user 'anylift-agent'") {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join("systemd", "anylift-agent.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nUser=anylift-agent\n") {
		t.Fatal("anylift-agent.service does not run as the user the sysusers file makes")
	}
}
