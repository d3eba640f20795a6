package apitest

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// TLSOnly is an HTTP client that behaves as GameLift's C++ server SDK (and
// so Unreal and O3DE servers) does on the wire: it speaks TLS to every
// URL, ws:// and http:// included, offers TLS 1.2 at most, and does not
// verify the server's certificate. Dialed lists the addresses it reached.
type TLSOnly struct {
	*http.Client
	mu     sync.Mutex
	dialed []string
}

// NewTLSOnly returns a TLSOnly client.
func NewTLSOnly() *TLSOnly {
	c := &TLSOnly{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.mu.Lock()
		c.dialed = append(c.dialed, addr)
		c.mu.Unlock()
		raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, _, _ := net.SplitHostPort(addr)
		conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
	c.Client = &http.Client{Transport: &http.Transport{DialContext: dial, DialTLSContext: dial, DisableKeepAlives: true}}
	return c
}

// Dialed returns the addresses dialed so far, in order.
func (c *TLSOnly) Dialed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.dialed...)
}
