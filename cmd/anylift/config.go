package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
)

// layer fills fs from, in rising precedence, the JSON config file named by
// the "config" flag (keys are flag names), ANYLIFT_* environment variables
// (ANYLIFT_DATA_DIR for --data-dir), and the command line.
func layer(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	fs.SetOutput(io.Discard)
	// First pass: what the command line says, including --config.
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cli := map[string]string{}
	fs.Visit(func(f *flag.Flag) { cli[f.Name] = f.Value.String() })

	path := cli["config"]
	if path == "" {
		path = getenv(envName("config"))
	}
	if path != "" {
		if err := applyFile(fs, path); err != nil {
			return err
		}
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), e)
			}
		}
	})
	if err != nil {
		return err
	}
	for name, v := range cli {
		if e := fs.Set(name, v); e != nil {
			return fmt.Errorf("--%s: %w", name, e)
		}
	}
	return nil
}

func envName(flagName string) string {
	return "ANYLIFT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func applyFile(fs *flag.FlagSet, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var values map[string]any
	if err := json.Unmarshal(b, &values); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if fs.Lookup(k) == nil || k == "config" {
			return fmt.Errorf("config file %s: unknown setting %q", path, k)
		}
		if err := fs.Set(k, fmt.Sprint(values[k])); err != nil {
			return fmt.Errorf("config file %s: %s: %w", path, k, err)
		}
	}
	return nil
}

// parseFlags layers args and the environment into fs (see layer). For -h
// it prints usage and fs's flags in groups to stdout and returns help true
// with no error.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stdout io.Writer, usage string, groups []flagGroup) (help bool, err error) {
	err = layer(fs, args, getenv)
	if err != flag.ErrHelp {
		return false, err
	}
	fmt.Fprintln(stdout, usage)
	writeFlagHelp(stdout, fs, groups)
	return true, nil
}

// logger is a text logger to w at the level named by text (debug, info,
// warn or error); another text is an error naming --log-level.
func logger(w io.Writer, text, format string) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(text)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}
