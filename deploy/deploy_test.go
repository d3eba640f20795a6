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

// The users the units run as are made by systemd-sysusers from the files
// shipped beside them (checked in a scratch root, nothing written).
func TestSysusersFiles(t *testing.T) {
	sysusers := needTool(t, "systemd-sysusers")
	for unit, user := range map[string]string{"anylift.service": "anylift", "anylift-agent.service": "anylift-agent"} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		file, err := filepath.Abs(filepath.Join("systemd", user+".sysusers.conf"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(sysusers, "--root="+root, "--dry-run", file).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Creating user '"+user+"'") {
			t.Fatalf("systemd-sysusers %s: %v\n%s", file, err, out)
		}
		b, err := os.ReadFile(filepath.Join("systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\nUser="+user+"\n") {
			t.Errorf("%s does not run as the user %s.sysusers.conf makes", unit, user)
		}
	}
}

// The image built from a prebuilt binary (deploy/image) is the root
// Containerfile's but for where the files come from: the instructions
// after "FROM scratch" are the same once each COPY's source is left out.
func TestContainerfilesAgree(t *testing.T) {
	root := finalStage(t, filepath.Join("..", "Containerfile"))
	prebuilt := finalStage(t, filepath.Join("image", "Containerfile.prebuilt"))
	if strings.Join(root, "\n") != strings.Join(prebuilt, "\n") {
		t.Fatalf("final stages differ:\nContainerfile:\n  %s\nimage/Containerfile.prebuilt:\n  %s",
			strings.Join(root, "\n  "), strings.Join(prebuilt, "\n  "))
	}
	for _, want := range []string{"USER 65532:65532", `VOLUME ["/data"]`, "COPY --chown=65532:65532 -> /data/",
		`CMD ["/anylift", "healthcheck"]`, `ENTRYPOINT ["/anylift"]`} {
		if !strings.Contains(strings.Join(root, "\n"), want) {
			t.Errorf("the image lacks %q", want)
		}
	}
}

// finalStage returns the instructions after the file's last FROM, each on
// one line (continuations joined, comments dropped), COPY's sources and
// --from replaced by "->".
func finalStage(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cont := ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || l == "" && cont == "" {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += strings.TrimSpace(s) + " "
			continue
		}
		lines = append(lines, cont+l)
		cont = ""
	}
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "FROM ") {
			last = i
		}
	}
	if last < 0 || lines[last] != "FROM scratch" {
		t.Fatalf("%s: the last stage is not FROM scratch", path)
	}
	stage := lines[last:]
	for i, l := range stage {
		f := strings.Fields(l)
		if f[0] != "COPY" {
			continue
		}
		var opts []string
		for _, o := range f[1 : len(f)-2] {
			if !strings.HasPrefix(o, "--from=") {
				opts = append(opts, o)
			}
		}
		stage[i] = strings.Join(append(append([]string{"COPY"}, opts...), "->", f[len(f)-1]), " ")
	}
	return stage
}

// The balancer's configuration of several-nodes.yaml passes "nginx -t"
// (the nodes' names, which resolve only inside Compose's network, are
// replaced by 127.0.0.1).
func TestComposeNginxConf(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if _, e := os.Stat("/usr/sbin/nginx"); e != nil {
			t.Skip("nginx is not installed")
		}
		nginx = "/usr/sbin/nginx"
	}
	b, err := os.ReadFile(filepath.Join("compose", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		if !strings.Contains(text, "server "+n+":9870 ") || !strings.Contains(text, "server "+n+":9872 ") {
			t.Errorf("nginx.conf does not balance %s's API and gateway", n)
		}
		text = strings.ReplaceAll(text, n+":", "127.0.0.1:")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nginx, "-t", "-e", "stderr", "-p", dir, "-c", conf).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

// The Compose files are valid as Compose reads them ("config"), with the
// variables they require set, and several-nodes.yaml refuses to start
// without the node secret. Runs with docker compose, docker-compose or
// podman-compose, whichever is installed.
func TestComposeFiles(t *testing.T) {
	var compose []string
	switch {
	case exec.Command("docker", "compose", "version").Run() == nil:
		compose = []string{"docker", "compose"}
	case exec.Command("docker-compose", "version").Run() == nil:
		compose = []string{"docker-compose"}
	case exec.Command("podman-compose", "version").Run() == nil:
		compose = []string{"podman-compose"}
	default:
		t.Skip("no docker compose, docker-compose or podman-compose")
	}
	dir := t.TempDir()
	for _, f := range []string{"one-node.yaml", "several-nodes.yaml", "nginx.conf"} {
		b, err := os.ReadFile(filepath.Join("compose", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "anylift-keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "anylift-keys", "credentials"), []byte("AKIDEXAMPLE secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(file string, env ...string) (string, error) {
		args := append(compose[1:], "-f", file, "config")
		cmd := exec.Command(compose[0], args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := config("one-node.yaml")
	if err != nil {
		t.Fatalf("%s config one-node.yaml: %v\n%s", compose, err, out)
	}
	for _, want := range []string{"/data", "anylift-keys:/etc/anylift:ro", "ANYLIFT_CREDENTIALS_FILE", "9870"} {
		if !strings.Contains(out, want) {
			t.Errorf("one-node.yaml as read lacks %q:\n%s", want, out)
		}
	}
	out, err = config("several-nodes.yaml", "ANYLIFT_NODE_SECRET=0123456789abcdef", "POSTGRES_PASSWORD=pw", "ANYLIFT_PUBLIC_HOST=lb.example")
	if err != nil {
		t.Fatalf("%s config several-nodes.yaml: %v\n%s", compose, err, out)
	}
	for _, want := range []string{"node-a:9880", "node-b:9880", "node-c:9880", "ws://lb.example:9870", "ANYLIFT_NODE_SECRET", "postgres://anylift@postgres:5432/anylift"} {
		if !strings.Contains(out, want) {
			t.Errorf("several-nodes.yaml as read lacks %q:\n%s", want, out)
		}
	}
	if out, err := config("several-nodes.yaml", "ANYLIFT_NODE_SECRET=", "POSTGRES_PASSWORD=pw"); err == nil {
		t.Errorf("several-nodes.yaml accepted an empty node secret:\n%s", out)
	}
}
