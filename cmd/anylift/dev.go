package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/agent"
	"github.com/anylift/anylift/internal/devenv"
)

// dev runs "anylift dev [flags] [-- game server arguments]": the service
// for local development, with a fleet ready for game servers (devenv).
func dev(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "status" {
		return statusCmd(ctx, args[1:], getenv, stdout, stderr)
	}
	var gameArgs []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, gameArgs = args[:i], args[i+1:]
	}
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	build := serveFlags(fs)
	setDefault(fs, "log-level", "warn") // the block is what matters
	setDefault(fs, "player-dev-mode", "true")
	setDefault(fs, "allow-fault-injection", "true")
	launch := fs.String("launch", "", "a game server executable for the agent to run (its arguments follow --)")
	count := fs.Int("count", 1, "how many copies of --launch to keep running")
	statusEvery := fs.Duration("status-interval", 2*time.Second, "how often dev looks at what its fleet runs, printing a line to standard error when that changed (0: never; anylift dev status shows it all)")
	procs := processFlags(fs)
	if help, err := parseFlags(fs, args, getenv, stdout, "usage: anylift dev [flags] [-- game server arguments]", devGroups); help || err != nil {
		return err
	}
	if *count < 1 || *count > 50 {
		return fmt.Errorf("--count must be 1 to 50")
	}
	if len(gameArgs) > 0 && *launch == "" {
		return fmt.Errorf("arguments after -- are for --launch, which is not set")
	}
	if *launch != "" {
		if st, err := os.Stat(*launch); err != nil || st.IsDir() {
			return fmt.Errorf("--launch %s: not an executable file", *launch)
		}
	}
	localSDK, wrap, err := procs()
	if err != nil {
		return err
	}
	if wrap != nil {
		if *launch == "" {
			return fmt.Errorf("--wrap wraps the game binary of --launch, which is not set")
		}
		if err := agent.CheckWrap(agent.JoinParameters(gameArgs)); err != nil {
			return fmt.Errorf("the arguments after --, as the wrapper's templates: %w", err)
		}
	}
	cfg, err := build(stderr)
	if err != nil {
		return err
	}
	if *statusEvery < 0 {
		return fmt.Errorf("--status-interval must not be negative")
	}
	return devenv.Run(ctx, devenv.Config{
		Server: cfg, Launch: *launch, Count: *count, Args: gameArgs, Out: stdout, Log: cfg.Log,
		Status: stderr, StatusEvery: *statusEvery, LocalSDK: localSDK, Wrap: wrap,
	})
}

// setDefault changes a flag's default without marking it set, so that the
// environment and the command line still override it.
func setDefault(fs *flag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	f.Value.Set(value)
	f.DefValue = value
}
