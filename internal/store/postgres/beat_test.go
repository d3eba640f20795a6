package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/storetestenv"
)

// TestHeartbeatHasItsOwnConnection: with every connection of the shared
// pool held by transactions in progress (requests queued on one hot row),
// the node heartbeat still commits, on its own connection.
func TestHeartbeatHasItsOwnConnection(t *testing.T) {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	db, err := Open(ctx, storetestenv.FreshSchema(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for range poolSize {
		wg.Go(func() {
			db.Update(ctx, func(store.Tx) error {
				held <- struct{}{}
				<-release
				return nil
			})
		})
	}
	for range poolSize {
		<-held
	}
	// The bound only keeps a failure from hanging the test: without a
	// connection of its own, the heartbeat waits for the pool until
	// release, which comes after it.
	beatCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = db.UpdateBeat(beatCtx, func(tx store.Tx) error {
		return tx.BeatNode(&store.Node{ID: "node-beat", Address: "127.0.0.1:1", Started: time.Now()})
	})
	close(release)
	wg.Wait()
	if err != nil {
		t.Fatalf("heartbeat while the shared pool is busy: %v", err)
	}
}
