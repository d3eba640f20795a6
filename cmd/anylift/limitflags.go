package main

import (
	"flag"
	"fmt"

	"github.com/anylift/anylift/internal/server"
)

// limitFlags defines the flags bounding every listener (docs/decisions.md,
// "Listeners") and returns the function that reads them.
func limitFlags(fs *flag.FlagSet) func() (server.Limits, error) {
	header := fs.Duration("read-header-timeout", server.DefaultReadHeaderTimeout, "time a client has to send a request's line and headers, on every listener")
	read := fs.Duration("read-timeout", server.DefaultReadTimeout, "time a client has to send a whole request, body included (WebSocket connections are exempt once upgraded)")
	write := fs.Duration("write-timeout", server.DefaultWriteTimeout, "time to serve a request and write its answer, from the end of its headers")
	idle := fs.Duration("idle-timeout", server.DefaultIdleTimeout, "time a keep-alive connection may wait for its next request")
	conns := fs.Int("max-connections", server.DefaultMaxConns, "open HTTP connections per listener; at the cap the one idle longest is closed (process WebSocket connections are not counted)")
	unauth := fs.Int64("max-unauthenticated-body-bytes", server.DefaultUnauthenticatedBodyBytes, "request body bytes held, across all requests, before their signature is checked")
	return func() (server.Limits, error) {
		if *header <= 0 || *read <= 0 || *write <= 0 || *idle <= 0 {
			return server.Limits{}, fmt.Errorf("--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
		}
		if *conns < 1 || *unauth < 1 {
			return server.Limits{}, fmt.Errorf("--max-connections and --max-unauthenticated-body-bytes must be positive")
		}
		return server.Limits{ReadHeaderTimeout: *header, ReadTimeout: *read, WriteTimeout: *write, IdleTimeout: *idle,
			MaxConns: *conns, UnauthenticatedBodyBytes: *unauth}, nil
	}
}
