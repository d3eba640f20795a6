package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
)

// BenchmarkStartup measures how long a server takes to start on an
// embedded store holding Sessions live game sessions: opening the store,
// loading the sessions into memory (internal/live) and listening. Run it
// with -benchtime 1x; each iteration starts and stops the server once.
func BenchmarkStartup(b *testing.B) {
	cfg := startupStore(b)
	ctx := context.Background()
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		start := time.Now()
		srv, err := server.Start(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		if err := srv.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "startup-ms")
}

// startupDir holds the store BenchmarkStartup starts on, seeded once per
// run (the benchmark function runs more than once).
var startupDir string

// startupStore returns the configuration of a server on a store holding
// Sessions live game sessions, seeding it the first time.
func startupStore(b *testing.B) server.Config {
	seedMu.Lock()
	defer seedMu.Unlock()
	cfg := server.Config{
		Listen: "127.0.0.1:0", DataDir: startupDir, Region: apitest.Region, AccountID: accountID,
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey},
	}
	if startupDir != "" {
		return cfg
	}
	dir, err := os.MkdirTemp("", "anylift-bench-startup-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	cfg.DataDir = dir
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	acct := game.Account{Region: apitest.Region, ID: accountID}
	now := time.Now().UTC().Truncate(time.Millisecond)
	seedSessions(b, srv.Store(), acct, seedFleet(b, srv.Store(), acct, now), now)
	if err := srv.Close(ctx); err != nil {
		b.Fatal(err)
	}
	startupDir = dir
	return cfg
}
