package kube

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestCallsToAStalledAPIServerEnd: a call to an API server that takes the
// connection and never answers fails after CallTimeout, so that the
// reconciliation making it ends and the next one tries again, rather than
// every fleet's reconciliation waiting on it for ever.
func TestCallsToAStalledAPIServerEnd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	held := make(chan net.Conn, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held <- conn // read nothing, answer nothing
		}
	}()
	t.Cleanup(func() {
		for {
			select {
			case conn := <-held:
				conn.Close()
			default:
				return
			}
		}
	})
	cs, err := NewClient(&rest.Config{Host: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{Client: cs, Namespace: "games", CallTimeout: 100 * time.Millisecond})
	for what, call := range map[string]func(context.Context) error{
		"deleting a pod":    func(ctx context.Context) error { return c.removePod(ctx, "fleet-1-0-0-bcdfg") },
		"deleting a Secret": func(ctx context.Context) error { return c.deleteSecret(ctx, "fleet-1-0-0-bcdfg") },
	} {
		if err := call(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a stalled API server: %v, want the call's deadline exceeded", what, err)
		}
	}
}
