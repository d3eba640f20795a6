package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagGroup is a titled group of flags in a command's help. A name ending
// in '*' takes every flag starting with what precedes it.
type flagGroup struct {
	title string
	names []string
}

// serveGroups group the flags of "anylift serve" (and of "anylift dev",
// after its own).
var serveGroups = []flagGroup{
	{"API and listeners", []string{"listen", "tls-listen", "tls-cert", "tls-key", "sdk-endpoint", "agent-endpoint", "region", "account-id"}},
	{"Credentials and rate limits", []string{"access-key", "secret-key", "credentials-file", "insecure-any-credentials", "any-signing-region",
		"rate-limit", "rate-burst"}},
	{"Store", []string{"data-dir", "store", "sqlite-synchronous"}},
	{"Processes, tokens and sessions", []string{"unhealthy-timeout", "health-check-interval", "process-lost-grace", "auth-token-ttl",
		"reservation-timeout", "max-players-per-session", "search-page-size"}},
	{"Several nodes (one PostgreSQL store)", []string{"node-*", "drain-timeout", "fleet-ownership"}},
	{"Events and webhooks", []string{"webhook-*", "event-*"}},
	{"Player gateway", []string{"player-*"}},
	{"Limits of every listener", []string{"read-header-timeout", "read-timeout", "write-timeout", "idle-timeout", "max-connections",
		"max-unauthenticated-body-bytes", "max-websockets", "max-connections-per-ip", "connection-rate-per-ip", "connection-burst-per-ip",
		"per-ip-exempt"}},
	{"Console and metrics", []string{"metrics-*"}},
	{"Container fleets on Kubernetes", []string{"kube*"}},
	{"Testing", []string{"allow-fault-injection"}},
	{"Logging and settings", []string{"log-level", "log-format", "config"}},
}

// wrapGroup holds the flags of the wrapper of game binaries without an SDK.
var wrapGroup = flagGroup{"Game binaries without an SDK (the wrapper)", []string{"wrap", "wrap-*"}}

var devGroups = append([]flagGroup{{"Development", []string{"launch", "count", "status-interval", "local-sdk-listen"}}, wrapGroup}, serveGroups...)

var agentGroups = []flagGroup{
	{"The service", []string{"endpoint-url", "region", "access-key", "secret-key"}},
	{"This machine", []string{"fleet-id", "location", "compute-name", "ip-address", "dns-name"}},
	{"Server processes", []string{"log-dir", "work-dir", "poll-interval", "stop-timeout", "local-sdk-listen"}},
	wrapGroup,
	{"Logging and settings", []string{"log-level", "log-format", "config"}},
	{"Deprecated", []string{"endpoint"}},
}

// groupOf is the title of the group holding the flag name ("" for none).
func groupOf(groups []flagGroup, name string) string {
	for _, g := range groups {
		for _, n := range g.names {
			if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(name, p) || n == name {
				return g.title
			}
		}
	}
	return ""
}

// writeFlagHelp prints fs's flags under the groups' titles, in the groups'
// order (flags in no group last, under "Other"): per flag its name, the
// type of its value, its description and its default.
func writeFlagHelp(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	io.WriteString(w, "\nEvery flag may also be set as ANYLIFT_<FLAG> (ANYLIFT_DATA_DIR for --data-dir)\n"+
		"or in the JSON file of --config; the command line wins over the environment,\n"+
		"and the environment over the file.\n")
	writeFlagGroups(w, fs, groups)
}

// writeFlagGroups prints fs's flags under the groups' titles, as
// writeFlagHelp does, without its words on the environment.
func writeFlagGroups(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	byGroup := map[string][]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		g := groupOf(groups, f.Name)
		byGroup[g] = append(byGroup[g], f)
	})
	var b strings.Builder
	titles := make([]string, 0, len(groups)+1)
	for _, g := range groups {
		titles = append(titles, g.title)
	}
	for _, title := range append(titles, "") {
		list := byGroup[title]
		if len(list) == 0 {
			continue
		}
		delete(byGroup, title) // a title used twice prints once
		if title == "" {
			title = "Other"
		}
		b.WriteString("\n" + title + ":\n")
		// Within a group, the group's order.
		for _, f := range ordered(list, groups, title) {
			writeFlag(&b, f)
		}
	}
	io.WriteString(w, b.String())
}

// ordered sorts a group's flags as its names list them (prefix patterns
// in name order), the rest by name after them.
func ordered(list []*flag.Flag, groups []flagGroup, title string) []*flag.Flag {
	var names []string
	for _, g := range groups {
		if g.title == title {
			names = append(names, g.names...)
		}
	}
	rank := func(name string) int {
		for i, n := range names {
			if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(name, p) || n == name {
				return i
			}
		}
		return len(names)
	}
	out := append([]*flag.Flag(nil), list...)
	for i := 1; i < len(out); i++ { // insertion sort: stable, and lists are short
		for j := i; j > 0 && rank(out[j].Name) < rank(out[j-1].Name); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

const (
	flagColumn = 30 // where descriptions start
	helpWidth  = 80
)

func writeFlag(b *strings.Builder, f *flag.Flag) {
	typ, usage := flag.UnquoteUsage(f)
	head := "  --" + f.Name
	if typ != "" {
		head += " " + typ
	}
	if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "0s" {
		usage += fmt.Sprintf(" (default %s)", d)
	}
	if len(head) >= flagColumn-1 {
		b.WriteString(head + "\n")
		head = ""
	}
	line := head + strings.Repeat(" ", flagColumn-len(head))
	empty := true
	for _, word := range strings.Fields(usage) {
		if !empty && len(line)+1+len(word) > helpWidth {
			b.WriteString(line + "\n")
			line, empty = strings.Repeat(" ", flagColumn), true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	b.WriteString(line + "\n")
}
