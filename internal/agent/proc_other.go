//go:build !unix

package agent

import (
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup stops cmd: there are no process groups to signal here, and
// SIGTERM cannot be delivered, so the process is killed.
func signalGroup(cmd *exec.Cmd, _ syscall.Signal) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
