package main

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/server"
)

// The listener limits have generous defaults and can be set by flag,
// environment or config file; nonsense is refused naming the flags.
func TestLimitFlags(t *testing.T) {
	cfg, err := configFrom(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := server.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 90 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxConns: 4096, UnauthenticatedBodyBytes: 64 << 20,
		MaxWebSockets: 32768, MaxConnsPerIP: 1024, ConnRatePerIP: 200, ConnBurstPerIP: 2000}
	if !reflect.DeepEqual(cfg.Limits, want) {
		t.Errorf("defaults %+v, want %+v", cfg.Limits, want)
	}
	cfg, err = configFrom(t, []string{"--read-timeout", "5s", "--max-connections", "100"},
		map[string]string{"ANYLIFT_IDLE_TIMEOUT": "30s", "ANYLIFT_MAX_UNAUTHENTICATED_BODY_BYTES": "1048576"})
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Limits; l.ReadTimeout != 5*time.Second || l.MaxConns != 100 || l.IdleTimeout != 30*time.Second || l.UnauthenticatedBodyBytes != 1<<20 {
		t.Errorf("set: %+v", l)
	}
	for _, args := range [][]string{{"--read-timeout", "0s"}, {"--max-connections", "0"}, {"--max-unauthenticated-body-bytes", "-1"},
		{"--max-websockets", "0"}, {"--max-connections-per-ip", "-1"}, {"--connection-rate-per-ip", "NaN"}, {"--connection-burst-per-ip", "0"},
		{"--per-ip-exempt", "loopback,10.0.0.0/33"}} {
		if _, err := configFrom(t, args, nil); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// The per-address bounds can be set, turned off (0), and given the
// addresses of a balancer to leave alone; loopback is exempt unless the
// list leaves it out.
func TestPerIPFlags(t *testing.T) {
	cfg, err := configFrom(t, []string{"--max-websockets", "10", "--max-connections-per-ip", "0", "--connection-rate-per-ip", "0"},
		map[string]string{"ANYLIFT_PER_IP_EXEMPT": "loopback, 10.1.2.3, 172.16.0.0/12, 2001:db8::/32"})
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	wantExempt := []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("2001:db8::/32")}
	if l.MaxWebSockets != 10 || l.MaxConnsPerIP >= 0 || l.ConnRatePerIP >= 0 || l.LimitLoopback || !reflect.DeepEqual(l.PerIPExempt, wantExempt) {
		t.Errorf("set: %+v", l)
	}
	cfg, err = configFrom(t, []string{"--per-ip-exempt", ""}, nil)
	if err != nil || !cfg.Limits.LimitLoopback || len(cfg.Limits.PerIPExempt) != 0 {
		t.Errorf("no exemption: %+v (%v)", cfg.Limits, err)
	}
}
