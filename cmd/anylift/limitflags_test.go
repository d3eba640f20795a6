package main

import (
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
		IdleTimeout: 2 * time.Minute, MaxConns: 4096, UnauthenticatedBodyBytes: 64 << 20}
	if cfg.Limits != want {
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
	for _, args := range [][]string{{"--read-timeout", "0s"}, {"--max-connections", "0"}, {"--max-unauthenticated-body-bytes", "-1"}} {
		if _, err := configFrom(t, args, nil); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
