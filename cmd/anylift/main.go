// Command anylift is a self-hostable game session service that speaks
// Amazon GameLift's protocols. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/anylift/anylift/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		var exit *cli.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode()) // already printed
		}
		fmt.Fprintln(os.Stderr, "anylift:", err)
		os.Exit(1)
	}
}

const usage = `usage: anylift <command> [flags]

commands:
  serve    run the service (control-plane API on --listen)
  dev      run the service for local development, with a fleet ready for game servers
  agent    run a game machine's server processes for an Anywhere fleet
  backup   write a consistent copy of the embedded store, while it runs
  restore  make a data directory from a backup
  player-token  print a test player token for the player gateway
  status   show what a running Anylift runs: processes, game sessions, players, faults
  fault    make things fail on purpose, to test a game's retry and reconnect paths
  healthcheck  exit 0 if the server on this machine is ready (GET /readyz), for container health checks
  version  print the version, the commit it was built from, and the platform
  <operation>  call the API as "aws gamelift <operation>" does (listed below)

Run "anylift <command> -h" for a command's flags.

`

// run is the whole program; main only wires it to the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "dev":
		return dev(ctx, args[1:], getenv, stdout, stderr)
	case "agent":
		return agentCmd(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return backupCmd(ctx, args[1:], getenv, stdout, stderr)
	case "restore":
		return restoreCmd(ctx, args[1:], getenv, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, args[1:], getenv, stdout)
	case "player-token":
		return playerToken(args[1:], getenv, stdout)
	case "status":
		return statusCmd(ctx, args[1:], getenv, stdout, stderr)
	case "fault":
		return faultCmd(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return cli.WriteOperations(stdout)
	}
	// Anything else is an API operation (or global flags before one).
	return cli.Run(ctx, args, getenv, stdout, stderr)
}
