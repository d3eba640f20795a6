package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/anylift/anylift/internal/store/sqlite"
)

const backupUsage = `usage: anylift backup [--data-dir DIR] FILE

Writes a consistent copy of the embedded store in DIR to FILE, while a
server runs on DIR or not. Every write acknowledged before the backup began
is in the copy. FILE must not exist. For PostgreSQL use pg_dump
(docs/operations.md).
`

const restoreUsage = `usage: anylift restore FILE --data-dir NEWDIR

Makes NEWDIR a data directory holding the store backed up in FILE; a server
started with --data-dir NEWDIR has the state the backup had. NEWDIR must
not hold a store already.
`

func backupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	dir, file, help, err := storeFileArgs("backup", backupUsage, args, getenv, stdout)
	if help || err != nil {
		return err
	}
	c, err := sqlite.Backup(ctx, dir, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup of %s written to %s (%d bytes, schema version %d)\n", dir, c.File, c.Bytes, c.Version)
	return nil
}

func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	dir, file, help, err := storeFileArgs("restore", restoreUsage, args, getenv, stdout)
	if help || err != nil {
		return err
	}
	c, err := sqlite.Restore(ctx, file, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s restored into %s (%d bytes, schema version %d): start anylift with --data-dir %s\n", c.File, dir, c.Bytes, c.Version, dir)
	return nil
}

// storeFileArgs reads the arguments of backup and restore: --data-dir
// (ANYLIFT_DATA_DIR when not given, as serve reads it) and one FILE,
// before or after the flag. A config file is not read: its other settings
// are serve's.
func storeFileArgs(name, usage string, args []string, getenv func(string) string, stdout io.Writer) (dir, file string, help bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "anylift-data", "directory of the embedded store")
	var files []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, usage+"\n")
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return "", "", true, nil
			}
			return "", "", false, err
		}
		args = fs.Args()
		if len(args) > 0 {
			files = append(files, args[0])
			args = args[1:]
		}
	}
	if len(files) != 1 || files[0] == "" {
		return "", "", false, fmt.Errorf("%s needs one FILE\n%s", name, usage)
	}
	if files[0] == "-" {
		return "", "", false, fmt.Errorf("%s needs a FILE name, not standard input or output", name)
	}
	if !flagSet(fs, "data-dir") {
		if v := getenv(envName("data-dir")); v != "" {
			*dataDir = v
		}
	}
	if *dataDir == "" {
		return "", "", false, fmt.Errorf("%s needs a --data-dir", name)
	}
	return *dataDir, files[0], false, nil
}
