package devenv

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/sdkserver"
)

// printBlock prints what a developer needs, once: the variables that point
// the AWS CLI, boto3 and the anylift CLI at the service, and a game server's four values as flags
// and as GAMELIFT_SDK_* variables.
func printBlock(w io.Writer, e *Env, cfg Config) {
	if w == nil {
		return
	}
	tok, _ := e.Token()
	vars := e.sdkVars()
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("Anylift dev is ready in %s (data in %s)", e.Elapsed.Round(time.Millisecond), cfg.Server.DataDir)
	p("")
	p("AWS CLI, boto3 and the anylift CLI (any key pair is accepted); paste into your shell:")
	p("  export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s", AccessKey, SecretKey, regionOf(cfg.Server))
	p("  export AWS_ENDPOINT_URL_GAMELIFT=%s", e.Server.URL())
	p("then:")
	p("  aws gamelift describe-fleet-attributes")
	p("  anylift describe-fleet-attributes")
	p("(an aws CLI older than 1.29 or 2.13 ignores AWS_ENDPOINT_URL_GAMELIFT: add --endpoint-url %s)", e.Server.URL())
	p("")
	p("Fleet %s (ANYWHERE), location %s, compute %s at %s", e.FleetID, Location, ComputeName, ComputeIP)
	p("  fleet ARN    %s", e.FleetARN)
	p("  location ARN %s", e.LocationARN)
	p("")
	p("Game server parameters:")
	p("  -websocketurl %s -authtoken %s -hostid %s -fleetid %s", e.Server.SDKEndpoint(), tok, ComputeName, e.FleetID)
	p("")
	p("or as environment variables (also in %s, kept fresh):", filepath.Join(cfg.Server.DataDir, envFile))
	for _, kv := range vars {
		p("  %s=%s", kv[0], kv[1])
	}
	p("")
	p("Each process also needs a unique -processid (GAMELIFT_SDK_PROCESS_ID).")
	p("Dev accepts this auth token for as long as %s lives; servers get fresh ones as they run.", cfg.Server.DataDir)
	p("The URL serves every server SDK: its port speaks plain and TLS (the C++ SDK in Unreal and O3DE")
	p("always uses TLS and checks no certificate). A Go server given wss:// must trust")
	p("  %s (SSL_CERT_FILE).", certPath(cfg))
	if addr := e.Server.PlayerAddr(); addr != "" {
		p("Player gateway for game clients: http://%s (dev mode: the X-Anylift-Player-Id header names the player)", addr)
	}
	p("Console: %s/console  Metrics: %s/metrics", e.Server.URL(), e.Server.URL())
	switch {
	case cfg.Launch != "" && cfg.Wrap != nil:
		p("Wrapping %d x %s (no SDK) through the agent: each game session starts one; logs in %s",
			max(cfg.Count, 1), cfg.Launch, filepath.Join(cfg.Server.DataDir, "logs"))
	case cfg.Launch != "":
		p("Running %d x %s through the agent; logs in %s", max(cfg.Count, 1), cfg.Launch, filepath.Join(cfg.Server.DataDir, "logs"))
	}
	p("What dev runs: anylift dev status   Faults to test a game against: anylift fault -h")
	p("Press Ctrl-C to stop.")
	io.WriteString(w, b.String())
}

// certPath is the service's TLS certificate: --tls-cert, or the one
// generated into the data directory.
func certPath(cfg Config) string {
	if cfg.Server.TLSCert != "" {
		return cfg.Server.TLSCert
	}
	return filepath.Join(cfg.Server.DataDir, sdkserver.GeneratedCertFile)
}
