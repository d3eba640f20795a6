package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/anylift/anylift/internal/cli"
	"github.com/anylift/anylift/internal/extapi"
)

const statusUsage = `usage: anylift status [flags]   (or: anylift dev status [flags])

Shows what a running Anylift runs: per fleet its computes, its server
processes (status, health, last healthy report, game session), its game
sessions with their players, and the faults in force. Every fleet unless
--fleet-id is given.`

// statusCmd runs "anylift status".
func statusCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	// The dev fleet is a fault's default, not the status view's: every
	// fleet is shown unless one is asked for.
	sf := &serviceFlags{everyFleet: true}
	sf.define(fs, "only this fleet (id or ARN)")
	ext, help, err := sf.parse(fs, args, getenv, stdout, statusUsage)
	if help {
		return nil
	}
	if err != nil {
		return cli.Fail(stderr, err)
	}
	var out extapi.DescribeStatusOutput
	if err := ext.Call(ctx, extapi.OpDescribeStatus, extapi.DescribeStatusInput{FleetId: sf.fleet}, &out); err != nil {
		return cli.Fail(stderr, err)
	}
	if sf.output == "json" {
		return writeIndented(stdout, out)
	}
	writeStatus(stdout, &out)
	return nil
}

// writeStatus prints a status answer as compact tables.
func writeStatus(w io.Writer, st *extapi.DescribeStatusOutput) {
	if len(st.Fleets) == 0 {
		fmt.Fprintln(w, "No fleets.")
		return
	}
	for i, f := range st.Fleets {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Fleet %s %s %s, locations %s\n", f.FleetId, f.Name, f.Status, strings.Join(f.Locations, ", "))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if len(f.Computes) == 0 {
			fmt.Fprintln(tw, "  no computes")
		} else {
			fmt.Fprintln(tw, "  COMPUTE\tLOCATION\tIP ADDRESS\tSTATUS")
			for _, c := range f.Computes {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.ComputeName, c.Location, c.IpAddress, c.Status)
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
		writeProcesses(w, st.Now, f.Processes)
		fmt.Fprintln(w)
		writeSessions(w, f.GameSessions)
		if len(f.Faults) > 0 {
			fmt.Fprintln(w)
			writeFaultTable(w, "  ", f.Faults, false)
		}
	}
	if st.Truncated {
		fmt.Fprintf(w, "(lists cut at %d entries)\n", extapi.MaxListed)
	}
}

func writeProcesses(w io.Writer, now time.Time, list []extapi.ProcessStatus) {
	if len(list) == 0 {
		fmt.Fprintln(w, "  no server processes")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  PROCESS\tCOMPUTE\tSTATUS\tHEALTH\tLAST HEALTHY\tPORT\tGAME SESSION")
	for _, p := range list {
		health := "healthy"
		switch {
		case !p.Connected:
			health = "disconnected"
		case !p.Healthy:
			health = "unhealthy"
		}
		port := "-"
		if p.Port != 0 {
			port = fmt.Sprint(p.Port)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ProcessId, p.ComputeName, p.Status, health, ago(now, p.LastHealthy),
			port, orDash(shortSession(p.GameSessionId)))
	}
	tw.Flush()
}

func writeSessions(w io.Writer, list []extapi.GameSessionStatus) {
	if len(list) == 0 {
		fmt.Fprintln(w, "  no game sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  GAME SESSION\tSTATUS\tPLAYERS\tPROCESS\tLOCATION\tNAME")
	for _, gs := range list {
		fmt.Fprintf(tw, "  %s\t%s\t%d/%d\t%s\t%s\t%s\n", shortSession(gs.GameSessionId), gs.Status, gs.CurrentPlayerSessionCount,
			gs.MaximumPlayerSessionCount, orDash(gs.ProcessId), gs.Location, orDash(gs.Name))
	}
	tw.Flush()
}

// shortSession is the last part of a game session ARN (gsess-…).
func shortSession(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ago says how long before now t was, in whole seconds.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Truncate(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

// writeIndented prints v as indented JSON.
func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
