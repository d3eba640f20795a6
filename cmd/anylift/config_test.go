package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/server"
)

// configFrom layers args and env over a fresh serve flag set.
func configFrom(t *testing.T, args []string, env map[string]string) (server.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	build := serveFlags(fs)
	if err := layer(fs, args, func(k string) string { return env[k] }); err != nil {
		return server.Config{}, err
	}
	return build(io.Discard)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigLayering(t *testing.T) {
	file := writeFile(t, "anylift.json", `{"region": "eu-file", "listen": "127.0.0.1:1111", "data-dir": "/file",
		"max-players-per-session": 300, "insecure-any-credentials": true, "reservation-timeout": "90s"}`)
	env := map[string]string{"ANYLIFT_CONFIG": file, "ANYLIFT_LISTEN": "127.0.0.1:2222", "ANYLIFT_DATA_DIR": "/env"}

	cfg, err := configFrom(t, []string{"--data-dir", "/flag"}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"region (file)", cfg.Region, "eu-file"},
		{"listen (env over file)", cfg.Listen, "127.0.0.1:2222"},
		{"data-dir (flag over env over file)", cfg.DataDir, "/flag"},
		{"account-id (default)", cfg.AccountID, "000000000000"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if cfg.MaxPlayersPerSession != 300 || !cfg.AnyCredentials || cfg.ReservationTimeout != 90*time.Second {
		t.Errorf("file values not applied: %+v", cfg)
	}

	// --config on the command line wins over ANYLIFT_CONFIG.
	other := writeFile(t, "other.json", `{"region": "ap-other"}`)
	cfg, err = configFrom(t, []string{"--config", other}, env)
	if err != nil || cfg.Region != "ap-other" {
		t.Errorf("--config: region %q (%v), want ap-other", cfg.Region, err)
	}

	// Defaults with nothing set.
	cfg, err = configFrom(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9870" || cfg.Region != "us-west-2" || cfg.AuthTokenTTL != 15*time.Minute ||
		cfg.ReservationTimeout != 60*time.Second || cfg.MaxPlayersPerSession != 200 || cfg.AnyCredentials {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args  []string
		env   map[string]string
		words string
	}{
		"unknown file key":   {[]string{"--config", writeFile(t, "a.json", `{"lisen": "x"}`)}, nil, `unknown setting "lisen"`},
		"file not JSON":      {[]string{"--config", writeFile(t, "b.json", `listen=x`)}, nil, "b.json"},
		"missing file":       {[]string{"--config", "/nonexistent/anylift.json"}, nil, "config file"},
		"bad env value":      {nil, map[string]string{"ANYLIFT_MAX_PLAYERS_PER_SESSION": "many"}, "ANYLIFT_MAX_PLAYERS_PER_SESSION"},
		"bad flag value":     {[]string{"--auth-token-ttl", "soon"}, nil, "auth-token-ttl"},
		"stray argument":     {[]string{"extra"}, nil, "unexpected argument"},
		"key without secret": {[]string{"--access-key", "AKID"}, nil, "go together"},
		"bad log level":      {[]string{"--log-level", "loud"}, nil, "log-level"},
		"zero unhealthy":     {[]string{"--unhealthy-timeout", "0s"}, nil, "unhealthy-timeout"},
		"nodes, no cluster":  {[]string{"--kube-watch-nodes"}, nil, "need --kubeconfig or --kube-in-cluster"},
	} {
		_, err := configFrom(t, tc.args, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.words)
		}
	}
}

// TestKubeWatchNodes: --kube-watch-nodes reaches the controller's
// configuration, off by default.
func TestKubeWatchNodes(t *testing.T) {
	kubeconfig := writeFile(t, "kubeconfig", "")
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--kubeconfig", kubeconfig}, false},
		{[]string{"--kubeconfig", kubeconfig, "--kube-watch-nodes"}, true},
	} {
		cfg, err := configFrom(t, c.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Kube == nil || cfg.Kube.WatchNodes != c.want {
			t.Errorf("%v: Kube %+v, want WatchNodes %v", c.args, cfg.Kube, c.want)
		}
	}
}

func TestUnhealthyTimeoutAndAgentEndpoint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{nil, nil, 3 * time.Minute},
		{[]string{"--unhealthy-timeout", "90s"}, nil, 90 * time.Second},
		{nil, map[string]string{"ANYLIFT_UNHEALTHY_TIMEOUT": "5m"}, 5 * time.Minute},
		// The older flag still works: three intervals, unless the new one
		// is given as well.
		{[]string{"--health-check-interval", "10s"}, nil, 30 * time.Second},
		{[]string{"--health-check-interval", "10s", "--unhealthy-timeout", "1m"}, nil, time.Minute},
	} {
		cfg, err := configFrom(t, tc.args, tc.env)
		if err != nil || cfg.UnhealthyTimeout != tc.want {
			t.Errorf("%v %v: UnhealthyTimeout %v (%v), want %v", tc.args, tc.env, cfg.UnhealthyTimeout, err, tc.want)
		}
	}
	cfg, err := configFrom(t, []string{"--agent-endpoint", "https://games.example"}, nil)
	if err != nil || cfg.AgentEndpoint != "https://games.example" {
		t.Errorf("--agent-endpoint: %q (%v)", cfg.AgentEndpoint, err)
	}
}

func TestCredentials(t *testing.T) {
	file := writeFile(t, "creds", "AKIDONE secret-one\n")
	cfg, err := configFrom(t, []string{"--credentials-file", file, "--access-key", "AKIDFLAG", "--secret-key", "secret-flag"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CredentialsFile != file || len(cfg.Credentials) != 1 || cfg.Credentials["AKIDFLAG"] != "secret-flag" {
		t.Errorf("credentials %v, file %q", cfg.Credentials, cfg.CredentialsFile)
	}
	if cfg.RateLimit != (access.Rate{PerSecond: DefaultRateLimit, Burst: DefaultRateBurst}) {
		t.Errorf("default rate limit %+v", cfg.RateLimit)
	}
	cfg, err = configFrom(t, []string{"--rate-limit", "0", "--rate-burst", "3"}, map[string]string{"ANYLIFT_RATE_LIMIT": "7"})
	if err != nil || cfg.RateLimit != (access.Rate{PerSecond: 0, Burst: 3}) {
		t.Errorf("--rate-limit 0: %+v (%v)", cfg.RateLimit, err)
	}
	for _, args := range [][]string{{"--rate-limit", "-1"}, {"--rate-burst", "0"}, {"--rate-limit", "NaN"}} {
		if _, err := configFrom(t, args, nil); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	// From the environment, as a container would pass them.
	cfg, err = configFrom(t, nil, map[string]string{"ANYLIFT_ACCESS_KEY": "AKIDENV", "ANYLIFT_SECRET_KEY": "secret-env"})
	if err != nil || cfg.Credentials["AKIDENV"] != "secret-env" {
		t.Errorf("env credentials: %v (%v)", cfg.Credentials, err)
	}
}

// A credentials file that cannot be used stops serve before it listens,
// with an error naming the file, the line and the problem.
func TestServeRefusesBrokenCredentialsFile(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "ops.json")
	os.WriteFile(policy, []byte(`{"Statement": {"Effect": "Allow", "Action": "gamelift:DescribeGameSession", "Resource": "*"}}`), 0o600)
	creds := filepath.Join(dir, "credentials")
	os.WriteFile(creds, []byte("AKIDOPS secret-ops ops.json\n"), 0o600)
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--credentials-file", creds}, func(string) string { return "" }, &stdout, &stderr)
	want := "credentials file " + creds + ":1: policy " + policy + `: Statement.Action: "gamelift:DescribeGameSession" matches no gamelift action`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	if strings.Contains(stdout.String(), "listening") {
		t.Errorf("it listened anyway: %s", stdout.String())
	}
}

func TestServeRefusesWithoutCredentials(t *testing.T) {
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", t.TempDir()},
		func(string) string { return "" }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("got %v, want a refusal naming the missing credentials", err)
	}
	if strings.Contains(stdout.String(), "listening") {
		t.Errorf("it listened anyway: %s", stdout.String())
	}
}

// lockedWriter collects stderr while serve runs.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestServeInsecureAnyCredentialsWarns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	stderr := &lockedWriter{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--insecure-any-credentials"},
			func(string) string { return "" }, pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "anylift listening on http://127.0.0.1:") {
		t.Fatalf("first line %q (%v)", line, err)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	log := stderr.String()
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "INSECURE") || !strings.Contains(log, "any access key") {
		t.Errorf("no loud warning in the log:\n%s", log)
	}
}

// --fleet-ownership not given leaves the choice to the server (on with
// PostgreSQL and --node-listen); given, from the command line, the
// environment or the file, it is asked for or refused.
func TestFleetOwnershipFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want server.Ownership
	}{
		{nil, nil, server.OwnershipDefault},
		{[]string{"--node-listen", "127.0.0.1:0"}, nil, server.OwnershipDefault},
		{[]string{"--fleet-ownership"}, nil, server.OwnershipOn},
		{[]string{"--fleet-ownership=true"}, nil, server.OwnershipOn},
		{[]string{"--fleet-ownership=false"}, nil, server.OwnershipOff},
		{nil, map[string]string{"ANYLIFT_FLEET_OWNERSHIP": "false"}, server.OwnershipOff},
		{nil, map[string]string{"ANYLIFT_CONFIG": writeFile(t, "own.json", `{"fleet-ownership": false}`)}, server.OwnershipOff},
		{[]string{"--fleet-ownership"}, map[string]string{"ANYLIFT_FLEET_OWNERSHIP": "false"}, server.OwnershipOn},
	} {
		cfg, err := configFrom(t, tc.args, tc.env)
		if err != nil || cfg.FleetOwnership != tc.want {
			t.Errorf("%v %v: FleetOwnership %v (%v), want %v", tc.args, tc.env, cfg.FleetOwnership, err, tc.want)
		}
	}
}
