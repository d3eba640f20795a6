package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/agent"
)

// agentCmd runs "anylift agent": the process supervisor of a game machine
// (internal/agent). Flags may also come from ANYLIFT_* variables; the
// credentials and region fall back to the usual AWS variables.
func agentCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, help, err := agentConfig(args, getenv, stdout, stderr)
	if help || err != nil {
		return err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// agentConfig reads the agent's flags; help is true when -h printed them.
func agentConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) (cfg agent.Config, help bool, err error) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	host, _ := os.Hostname()
	fs.String("config", "", "JSON file of settings, keyed by flag name")
	endpoint := fs.String("endpoint-url", "http://127.0.0.1:9870", "the Anylift service's API `URL`")
	fs.Var(alias{fs.Lookup("endpoint-url")}, "endpoint", "old name of --endpoint-url (a `URL`), still read")
	fs.Lookup("endpoint").DefValue = ""
	region := fs.String("region", "", "region to sign requests for (default $AWS_REGION, else us-west-2)")
	accessKey := fs.String("access-key", "", "access key id (default $AWS_ACCESS_KEY_ID)")
	secretKey := fs.String("secret-key", "", "secret key (default $AWS_SECRET_ACCESS_KEY)")
	fleetID := fs.String("fleet-id", "", "the Anywhere fleet to serve (required)")
	compute := fs.String("compute-name", host, "this machine's compute name, unique in the fleet")
	location := fs.String("location", "", "the fleet's custom location this machine is in (required)")
	ip := fs.String("ip-address", "", "the address players connect to (required)")
	dns := fs.String("dns-name", "", "the DNS name players connect to (optional)")
	logDir := fs.String("log-dir", "logs", "directory of the server processes' stdout and stderr logs")
	workDir := fs.String("work-dir", "", "working directory of the server processes, and base of relative launch paths")
	poll := fs.Duration("poll-interval", 15*time.Second, "how often to read the fleet's runtime configuration")
	stop := fs.Duration("stop-timeout", 30*time.Second, "how long a process has to exit after SIGTERM before SIGKILL")
	procs := processFlags(fs)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text (key=value lines) or json (one object per line, for log collectors)")
	if help, err := parseFlags(fs, args, getenv, stdout, "usage: anylift agent --fleet-id ID --location LOC --ip-address IP [flags]", agentGroups); help || err != nil {
		return cfg, help, err
	}
	log, err := logger(stderr, *logLevel, *logFormat)
	if err != nil {
		return cfg, false, err
	}
	if usesFlag(args, "endpoint") {
		log.Warn("--endpoint is deprecated; it is now --endpoint-url, as in the CLI")
	}
	localSDK, wrap, err := procs()
	if err != nil {
		return cfg, false, err
	}
	return agent.Config{
		Endpoint: *endpoint, Region: or(*region, getenv("AWS_REGION"), "us-west-2"),
		AccessKey: or(*accessKey, getenv("AWS_ACCESS_KEY_ID")), SecretKey: or(*secretKey, getenv("AWS_SECRET_ACCESS_KEY")),
		FleetID: *fleetID, ComputeName: *compute, Location: *location, IPAddress: *ip, DNSName: *dns,
		LogDir: *logDir, WorkDir: *workDir, PollInterval: *poll, StopTimeout: *stop,
		LocalSDK: localSDK, Wrap: wrap, Log: log,
	}, false, nil
}

// alias is a second name of a flag: setting it sets the flag.
type alias struct{ of *flag.Flag }

func (a alias) String() string {
	if a.of == nil {
		return ""
	}
	return a.of.Value.String()
}
func (a alias) Set(v string) error { return a.of.Value.Set(v) }

// usesFlag reports whether the command line gives the flag name (as -name,
// --name, or either with =value).
func usesFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// or is the first non-empty value.
func or(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
