//go:build unix

package bench

import (
	"syscall"
	"testing"
)

// raiseFileLimit lifts the soft limit on open files to the hard one: every
// connected process costs two descriptors when the clients run in the
// benchmark's own OS process.
func raiseFileLimit(tb testing.TB) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		tb.Log("reading the open-file limit:", err)
		return
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			tb.Log("raising the open-file limit:", err)
		}
	}
}
