package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, the module version the Go tool stamped is used.
var version = ""

// versionLine is what "anylift version" prints: the version, the commit
// it was built from (with "modified" when the work tree had changes) and
// when that commit was made, and the Go toolchain and platform.
func versionLine() string {
	v := version
	var commit, when string
	modified := false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = strings.TrimSuffix(info.Main.Version, "+dirty")
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(unreleased)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "anylift %s", v)
	if commit != "" {
		fmt.Fprintf(&b, " commit %s", commit[:min(len(commit), 12)])
		if when != "" {
			fmt.Fprintf(&b, " (%s)", when)
		}
		if modified {
			b.WriteString(" modified")
		}
	}
	fmt.Fprintf(&b, " %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
