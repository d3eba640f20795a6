//go:build pprof

package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// A build with the pprof tag serves net/http/pprof on the address in
// ANYLIFT_PPROF_LISTEN, apart from every other listener, for profiling a
// long run (the soak harness in internal/soak builds this way). Release
// builds leave this file out.
func init() {
	addr := os.Getenv("ANYLIFT_PPROF_LISTEN")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "anylift: pprof listener:", err)
		os.Exit(1)
	}
	go http.Serve(ln, http.DefaultServeMux)
}
