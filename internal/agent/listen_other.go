//go:build !linux

package agent

import (
	"net"
	"strconv"
	"time"
)

// listening reports whether something accepts TCP connections on port
// on the loopback interface; a game that listens on UDP only needs
// Wrap.ActivateAtOnce here.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
