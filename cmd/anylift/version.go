package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are set at build time with
// -ldflags "-X main.version=v1.2.0 -X main.commit=<git revision>"
// (scripts/release.sh and the Containerfile do). When they are not, the
// module version and the VCS revision the Go tool stamped are used.
var (
	version = ""
	commit  = ""
)

// versionLine is what "anylift version" prints: the version, the commit
// it was built from (with "modified" when the work tree had changes) and
// when that commit was made, and the Go toolchain and platform.
func versionLine() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, commit, info, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersion builds the version line from the values given at link
// time (v, rev: empty when not given), the build information (nil when
// there is none) and the platform. A commit given at link time wins over
// the stamped one; the stamped time and "modified" are kept only when
// they describe that same commit.
func formatVersion(v, rev string, info *debug.BuildInfo, platform string) string {
	var stamped, when string
	modified := false
	if info != nil {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = strings.TrimSuffix(info.Main.Version, "+dirty")
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				stamped = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		rev = stamped
	} else if stamped != rev {
		when, modified = "", false
	}
	if v == "" {
		v = "(unreleased)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "anylift %s", v)
	if rev != "" {
		fmt.Fprintf(&b, " commit %s", rev[:min(len(rev), 12)])
		if when != "" {
			fmt.Fprintf(&b, " (%s)", when)
		}
		if modified {
			b.WriteString(" modified")
		}
	}
	fmt.Fprintf(&b, " %s", platform)
	return b.String()
}
