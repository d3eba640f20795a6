package main

import (
	"flag"
	"fmt"
	"math"
	"net/netip"
	"strings"

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
	ws := fs.Int("max-websockets", server.DefaultMaxWebSockets, "upgraded (process WebSocket) connections per listener; beyond, an upgrade is answered 503")
	perIP := fs.Int("max-connections-per-ip", server.DefaultMaxConnsPerIP, "open HTTP connections per remote address on each listener; at the cap the address's own connection idle longest is closed (0: no cap)")
	rate := fs.Float64("connection-rate-per-ip", server.DefaultConnRatePerIP, "new connections per second one remote address may open on each listener, on average (0: no bound)")
	burst := fs.Int("connection-burst-per-ip", server.DefaultConnBurstPerIP, "new connections one remote address may open at once, beyond --connection-rate-per-ip")
	exempt := fs.String("per-ip-exempt", "loopback", "addresses and CIDR blocks, comma-separated, the per-address bounds do not apply to, and \"loopback\"; behind a load balancer or proxy, its addresses (empty: none)")
	return func() (server.Limits, error) {
		if *header <= 0 || *read <= 0 || *write <= 0 || *idle <= 0 {
			return server.Limits{}, fmt.Errorf("--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
		}
		if *conns < 1 || *unauth < 1 || *ws < 1 {
			return server.Limits{}, fmt.Errorf("--max-connections, --max-unauthenticated-body-bytes and --max-websockets must be positive")
		}
		if *perIP < 0 || *burst < 1 || *rate < 0 || math.IsNaN(*rate) || math.IsInf(*rate, 0) {
			return server.Limits{}, fmt.Errorf("--max-connections-per-ip and --connection-rate-per-ip must be 0 (off) or positive, --connection-burst-per-ip positive")
		}
		l := server.Limits{ReadHeaderTimeout: *header, ReadTimeout: *read, WriteTimeout: *write, IdleTimeout: *idle,
			MaxConns: *conns, UnauthenticatedBodyBytes: *unauth, MaxWebSockets: *ws,
			MaxConnsPerIP: offIfZero(*perIP), ConnRatePerIP: float64(offIfZero(*rate)), ConnBurstPerIP: *burst}
		var err error
		l.PerIPExempt, l.LimitLoopback, err = parseExempt(*exempt)
		return l, err
	}
}

// offIfZero maps a flag's 0 (off) to the -1 that turns a server.Limits
// member off (its 0 takes the default).
func offIfZero[N int | float64](n N) N {
	if n == 0 {
		return -1
	}
	return n
}

// parseExempt reads --per-ip-exempt: addresses, CIDR blocks and
// "loopback"; it reports whether loopback addresses are limited (not
// named).
func parseExempt(s string) (exempt []netip.Prefix, limitLoopback bool, err error) {
	limitLoopback = true
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case f == "loopback":
			limitLoopback = false
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, false, fmt.Errorf("--per-ip-exempt: %q is neither an address, a CIDR block nor \"loopback\"", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		exempt = append(exempt, p.Masked())
	}
	return exempt, limitLoopback, nil
}
