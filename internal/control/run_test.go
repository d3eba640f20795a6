package control

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/store/sqlite"
)

// TestHeartbeatOutlivesALongSweep: while a background sweep is stuck (a
// backlog of expirations after an outage, say), the node keeps beating,
// so it neither looks dead to other nodes nor refuses traffic.
func TestHeartbeatOutlivesALongSweep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(st, Config{}, nil, nil)
	stuck, release := make(chan struct{}), make(chan struct{})
	s.timers = append([]func(context.Context) error{func(context.Context) error {
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release
		return nil
	}}, s.timers...)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		s.Run(ctx)
	}()
	defer func() { cancel(); close(release); <-ran }()
	<-stuck // the sweeps are blocked from here on
	beat := func() time.Time { s.node.mu.Lock(); defer s.node.mu.Unlock(); return s.node.beatAt }
	since := beat()
	deadline := time.After(10 * time.Second)
	for !beat().After(since) {
		select {
		case <-deadline:
			t.Fatal("no heartbeat while a sweep was stuck")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := s.StoreReachable(); err != nil {
		t.Fatalf("StoreReachable while a sweep is stuck: %v", err)
	}
}
