package agent

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// listening reports whether a socket of this machine listens on port: a
// TCP socket in LISTEN state or a bound UDP socket, on any address, as
// /proc/net lists them. Nothing connects to the game to find out.
func listening(port int) bool {
	for _, f := range []struct {
		path  string
		state string // LISTEN for TCP; 07 (unconnected) for UDP
	}{{"/proc/net/tcp", "0A"}, {"/proc/net/tcp6", "0A"}, {"/proc/net/udp", "07"}, {"/proc/net/udp6", "07"}} {
		b, err := os.ReadFile(f.path)
		if err == nil && socketOnPort(b, port, f.state) {
			return true
		}
	}
	return false
}

// socketOnPort reports whether a /proc/net table lists a socket in state
// on local port port.
func socketOnPort(table []byte, port int, state string) bool {
	want := []byte(":" + strconv.FormatUint(uint64(port)|0x10000, 16)[1:])
	want = bytes.ToUpper(want)
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // the header
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) > 3 && bytes.HasSuffix(fields[1], want) && string(fields[3]) == state {
			return true
		}
	}
	return false
}
