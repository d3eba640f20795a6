package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/anylift/anylift/internal/cli"
	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/faults"
)

// faultAction is one "anylift fault" action that injects a fault.
type faultAction struct {
	name, kind, short, long string
}

var faultActions = []faultAction{
	{"fail-placements", faults.PlacementFailure, "CreateGameSession fails (FleetCapacityExceeded)",
		"CreateGameSession answers FleetCapacityExceededException, and queue placements find no room on the fleet, " +
			"--count times or for --duration."},
	{"delay-placements", faults.PlacementDelay, "game sessions and queue placements wait --delay",
		"New game sessions stay ACTIVATING --delay before their process hears of them (OnStartGameSession), and " +
			"queue placements wait --delay before they may land on the fleet, --count times or for --duration."},
	{"miss-health-checks", faults.MissHealthChecks, "health reports are lost: processes end unhealthy",
		"The processes' health reports are lost, --count of them or for --duration: a process without a healthy " +
			"report for the unhealthy timeout (3 minutes, --unhealthy-timeout) is terminated as unhealthy."},
	{"drop-connection", faults.DropConnection, "cut process connections now; the SDKs reconnect",
		"Cuts the processes' connections now, without a close frame, as a failed network does: the SDKs reconnect. " +
			"With --duration their reconnects are refused meanwhile; past --process-lost-grace (30 seconds) they are lost."},
	{"terminate-process", faults.TerminateProcess, "end processes now, as GameLift ends one",
		"Ends the processes now as GameLift ends one: their game sessions end (INTERRUPTED) and they hear " +
			"OnProcessTerminate; the event SERVER_PROCESS_FORCE_TERMINATED names the fault."},
	{"expire-reservations", faults.ExpireReservations, "RESERVED player sessions time out now",
		"RESERVED player sessions time out now, as if the reservation timeout had passed: their seats are free " +
			"and the game server's AcceptPlayerSession is refused."},
}

const faultUsage = `usage: anylift fault <action> [flags]

Injects faults into a running Anylift, to test a game's retry and reconnect
paths on purpose (docs/fault-injection.md). "anylift dev" takes them;
"anylift serve" only with --allow-fault-injection. Every fault writes a
GENERIC_EVENT on its fleet and a warning in the server's log.

actions:
%s  list                 the faults in force
  clear                end faults (--fault-id, or all of --fleet-id)

Run "anylift fault <action> -h" for its flags. --fleet-id defaults to the
fleet of "anylift dev" in --data-dir.
`

// scopeFlags maps the fault scope fields to their flags.
var scopeFlags = map[string]string{
	faults.FieldLocation: "location", faults.FieldComputeName: "compute-name", faults.FieldProcessID: "process-id",
	faults.FieldGameSessionID: "game-session-id", faults.FieldPlayerSessionID: "player-session-id",
}

var faultGroups = []flagGroup{
	{"The fault", []string{"count", "duration", "delay", "fault-id"}},
	{"Scope", []string{"fleet-id", "location", "compute-name", "process-id", "game-session-id", "player-session-id"}},
	{"The service", []string{"endpoint-url", "region", "access-key", "secret-key", "data-dir"}},
	{"Output", []string{"output"}},
}

// faultCmd runs "anylift fault <action> [flags]".
func faultCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		var b strings.Builder
		for _, a := range faultActions {
			fmt.Fprintf(&b, "  %-20s %s\n", a.name, a.short)
		}
		w := stdout
		if len(args) == 0 {
			w = stderr
		}
		fmt.Fprintf(w, faultUsage, b.String())
		if len(args) == 0 {
			return cli.Fail(stderr, cli.Usagef("no action given"))
		}
		return nil
	}
	name, args := args[0], args[1:]
	switch name {
	case "list", "clear":
		return faultListOrClear(ctx, name, args, getenv, stdout, stderr)
	}
	i := slices.IndexFunc(faultActions, func(a faultAction) bool { return a.name == name })
	if i < 0 {
		return cli.Fail(stderr, cli.Usagef("unknown fault action %q; see anylift fault -h", name))
	}
	return injectCmd(ctx, faultActions[i], args, getenv, stdout, stderr)
}

// serviceFlags defines the flags that say where the service is.
type serviceFlags struct {
	target        cli.Target
	dataDir       string
	output        string
	fleet         string
	fleetRequired bool
	// everyFleet: no default fleet, and so no --data-dir.
	everyFleet bool
}

func (s *serviceFlags) define(fs *flag.FlagSet, fleetHelp string) {
	fs.StringVar(&s.target.EndpointURL, "endpoint-url", "", "the service (default as for the operations: ANYLIFT_ENDPOINT, AWS_ENDPOINT_URL_GAMELIFT, http://127.0.0.1:9870)")
	fs.StringVar(&s.target.Region, "region", "", "signing region (default as for the operations)")
	fs.StringVar(&s.target.AccessKey, "access-key", "", "access key id (default as for the operations; dev's pair on this machine)")
	fs.StringVar(&s.target.SecretKey, "secret-key", "", "secret key of --access-key")
	if !s.everyFleet {
		fs.StringVar(&s.dataDir, "data-dir", "", "data directory of anylift dev, whose fleet is the default (default ANYLIFT_DATA_DIR or anylift-data)")
	}
	fs.StringVar(&s.output, "output", "text", "text or json")
	fs.StringVar(&s.fleet, "fleet-id", "", fleetHelp)
}

// parse parses args into fs, printing help for -h; it resolves the
// service and the fleet.
func (s *serviceFlags) parse(fs *flag.FlagSet, args []string, getenv func(string) string, stdout io.Writer, usage string) (*cli.Extension, bool, error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usage)
			writeFlagGroups(stdout, fs, faultGroups)
			return nil, true, nil
		}
		return nil, false, cli.Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, false, cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if s.output != "text" && s.output != "json" {
		return nil, false, cli.Usagef("--output must be text or json, not %q", s.output)
	}
	if s.fleet == "" && !s.everyFleet {
		s.fleet = devFleet(s.dataDir, getenv)
	}
	if s.fleet == "" && s.fleetRequired {
		return nil, false, cli.Usagef("--fleet-id is required (no anylift dev fleet was found in %s)", dataDirOf(s.dataDir, getenv))
	}
	ext, err := cli.NewExtension(s.target, getenv)
	return ext, false, err
}

func dataDirOf(dir string, getenv func(string) string) string {
	if dir == "" {
		dir = getenv("ANYLIFT_DATA_DIR")
	}
	if dir == "" {
		dir = "anylift-data"
	}
	return dir
}

// devFleet is the fleet id "anylift dev" keeps in its data directory, or "".
func devFleet(dir string, getenv func(string) string) string {
	b, err := os.ReadFile(filepath.Join(dataDirOf(dir, getenv), "dev-fleet-id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// injectCmd runs one injecting action.
func injectCmd(ctx context.Context, a faultAction, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fault "+a.name, flag.ContinueOnError)
	sf := &serviceFlags{fleetRequired: true}
	sf.define(fs, "the fleet (id or ARN)")
	scope := map[string]*string{}
	for _, field := range faults.Narrowers(a.kind) {
		name := scopeFlags[field]
		scope[field] = fs.String(name, "", "only this "+strings.ReplaceAll(name, "-", " ")+" of the fleet")
	}
	var count *int
	var duration, delay *time.Duration
	if faults.Immediate(a.kind) {
		count = fs.Int("count", 0, "act on at most this many (default: every one in the scope)")
	} else {
		count = fs.Int("count", 0, "fire this many times, then end (a Count or a --duration is required)")
	}
	if !faults.Immediate(a.kind) || a.kind == faults.DropConnection {
		help := "stay in force this long, then end (a Go duration: 90s, 4m)"
		if a.kind == faults.DropConnection {
			help = "refuse the dropped processes' reconnects this long (longer than --process-lost-grace, 30s, and they are lost)"
		}
		duration = fs.Duration("duration", 0, help)
	}
	if a.kind == faults.PlacementDelay {
		delay = fs.Duration("delay", 0, "how long each game session or queue placement is held back (required)")
	}
	ext, help, err := sf.parse(fs, args, getenv, stdout, "usage: anylift fault "+a.name+" [flags]\n\n"+wrapText(a.long, helpWidth))
	if help {
		return nil
	}
	if err != nil {
		return cli.Fail(stderr, err)
	}
	in := extapi.Fault{Kind: a.kind, FleetId: sf.fleet, Count: *count, Location: val(scope[faults.FieldLocation]),
		ComputeName: val(scope[faults.FieldComputeName]), ProcessId: val(scope[faults.FieldProcessID]),
		GameSessionId: val(scope[faults.FieldGameSessionID]), PlayerSessionId: val(scope[faults.FieldPlayerSessionID])}
	if duration != nil && *duration != 0 {
		in.Duration = duration.String()
	}
	if delay != nil && *delay != 0 {
		in.Delay = delay.String()
	}
	var out extapi.InjectFaultOutput
	if err := ext.Call(ctx, extapi.OpInjectFault, extapi.InjectFaultInput{Fault: in}, &out); err != nil {
		return cli.Fail(stderr, err)
	}
	if sf.output == "json" {
		return writeIndented(stdout, out)
	}
	f := out.Fault
	fmt.Fprintf(stdout, "%s %s on %s\n", f.FaultId, f.Kind, faultScope(f, true))
	switch {
	case faults.Immediate(f.Kind) && len(out.Affected) > 0:
		fmt.Fprintf(stdout, "acted on %d: %s\n", len(out.Affected), strings.Join(out.Affected, ", "))
		if f.ExpiresAt != nil {
			fmt.Fprintf(stdout, "their reconnects are refused until %s (anylift fault clear --fault-id %s ends it)\n",
				f.ExpiresAt.Format(time.RFC3339), f.FaultId)
		}
	case faults.Immediate(f.Kind):
		fmt.Fprintln(stdout, "acted on nothing that is still on this node")
	default:
		fmt.Fprintf(stdout, "in force: %s (anylift fault clear --fault-id %s ends it)\n", faultBudget(f), f.FaultId)
	}
	return nil
}

func val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// faultListOrClear runs "anylift fault list" and "anylift fault clear".
func faultListOrClear(ctx context.Context, action string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fault "+action, flag.ContinueOnError)
	sf := &serviceFlags{}
	var id *string
	usage := "usage: anylift fault list [flags]\n\nLists the faults in force, of --fleet-id (default: anylift dev's fleet, else every fleet)."
	if action == "clear" {
		id = fs.String("fault-id", "", "the fault to end")
		usage = "usage: anylift fault clear [flags]\n\nEnds fault --fault-id, or every fault of --fleet-id (default: anylift dev's fleet, else every fleet)."
	}
	sf.define(fs, "the fleet (id or ARN)")
	ext, help, err := sf.parse(fs, args, getenv, stdout, usage)
	if help {
		return nil
	}
	if err != nil {
		return cli.Fail(stderr, err)
	}
	var list []extapi.Fault
	if action == "list" {
		var out extapi.ListFaultsOutput
		err = ext.Call(ctx, extapi.OpListFaults, extapi.ListFaultsInput{FleetId: sf.fleet}, &out)
		list = out.Faults
		if sf.output == "json" && err == nil {
			return writeIndented(stdout, out)
		}
	} else {
		in := extapi.ClearFaultsInput{FaultId: *id}
		if *id == "" {
			in.FleetId = sf.fleet
		}
		var out extapi.ClearFaultsOutput
		err = ext.Call(ctx, extapi.OpClearFaults, in, &out)
		list = out.Faults
		if sf.output == "json" && err == nil {
			return writeIndented(stdout, out)
		}
	}
	if err != nil {
		return cli.Fail(stderr, err)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, map[string]string{"list": "No faults in force.", "clear": "No faults to clear."}[action])
		return nil
	}
	if action == "clear" {
		for _, f := range list {
			fmt.Fprintf(stdout, "cleared %s %s on %s (acted %s)\n", f.FaultId, f.Kind, faultScope(f, true), timesText(f.Fired))
		}
		return nil
	}
	writeFaultTable(stdout, "", list, true)
	return nil
}

// writeFaultTable prints faults as a table, each line after indent; the
// status view, which shows them under their fleet, leaves the fleet out.
func writeFaultTable(w io.Writer, indent string, list []extapi.Fault, withFleet bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, indent+"FAULT\tKIND\tSCOPE\tIN FORCE\tACTED")
	for _, f := range list {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%d\n", indent, f.FaultId, f.Kind, faultScope(f, withFleet), faultBudget(f), f.Fired)
	}
	tw.Flush()
}

// faultScope says what a fault applies to, its fleet included or not.
func faultScope(f extapi.Fault, fleet bool) string {
	var parts []string
	if fleet {
		parts = append(parts, "fleet "+f.FleetId)
	}
	for _, kv := range [][2]string{{"location", f.Location}, {"compute", f.ComputeName}, {"process", f.ProcessId},
		{"game session", f.GameSessionId}, {"player session", f.PlayerSessionId}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if len(parts) == 0 {
		return "the whole fleet"
	}
	return strings.Join(parts, ", ")
}

// faultBudget says for how long a standing fault is in force.
func faultBudget(f extapi.Fault) string {
	var parts []string
	if f.Delay != "" {
		parts = append(parts, "delay "+f.Delay)
	}
	if f.Count > 0 {
		parts = append(parts, timesText(f.Count)+" more")
	}
	if f.ExpiresAt != nil {
		parts = append(parts, "until "+f.ExpiresAt.Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// wrapText breaks text into lines of at most width columns.
func wrapText(text string, width int) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}

// timesText is "once", "2 times" and so on.
func timesText(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
