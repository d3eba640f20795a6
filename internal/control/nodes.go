package control

import (
	"context"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/store"
)

// Several nodes share one store. Each node beats its heartbeat into the
// store at every tick; a node whose heartbeat is NodeTTL old by the
// database's clock is dead, and the processes it held are marked
// disconnected (the process-lost grace then runs as on one node). Which
// node holds a process's connection, and what becomes of the processes of
// a dead or stalled node, is internal/processes' (holders.go).

// nodeState is what the Service knows of its own node.
type nodeState struct {
	started time.Time

	mu       sync.Mutex
	draining bool
	beatErr  error     // the last heartbeat's failure, nil after a success
	beatAt   time.Time // monotonic time of the last successful heartbeat
}

// beatTimeout bounds a heartbeat: a database that does not answer within
// it is unreachable.
const beatTimeout = 2 * time.Second

// storeFresh is how old the last successful heartbeat may be for the
// store to count as reachable (the sweep loop may be stuck on it).
const storeFresh = 5 * time.Second

// beatStore is a store with a connection of its own for the heartbeat
// (sqldb.DB.UpdateBeat on PostgreSQL): requests queued for the shared
// pool then never delay the heartbeat past beatTimeout, which would make
// the node refuse every request as if its database were gone.
type beatStore interface {
	UpdateBeat(ctx context.Context, fn func(store.Tx) error) error
}

// NodeID is this node's id in the store.
func (s *Service) NodeID() string { return s.cfg.NodeID }

// BeatNode records this node's heartbeat. It runs first at every tick;
// JoinCluster runs it once before the node serves, so that no process is
// held by a node the store does not know yet.
func (s *Service) BeatNode(ctx context.Context) error {
	s.node.mu.Lock()
	n := &store.Node{ID: s.cfg.NodeID, Address: s.cfg.NodeAddress, Started: s.node.started, Draining: s.node.draining,
		OwnsFleets: s.owners != nil}
	s.node.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, beatTimeout)
	defer cancel()
	beat := func(tx store.Tx) error { return tx.BeatNode(n) }
	var err error
	if b, ok := s.store.(beatStore); ok {
		err = b.UpdateBeat(ctx, beat)
	} else {
		err = s.update(ctx, beat)
	}
	s.node.mu.Lock()
	s.node.beatErr = err
	if err == nil {
		s.node.beatAt = time.Now()
	}
	s.node.mu.Unlock()
	return err
}

// JoinCluster runs once when the node starts, before it serves. A node
// that starts again with the id it had before holds no connection, but
// the store may still say it holds processes that were connected to it:
// those are released and marked disconnected now, so the lost-process
// grace runs for them as for any dropped connection (a process that
// reconnects within it, to any node, is reclaimed). Then the node's
// heartbeat is recorded.
func (s *Service) JoinCluster(ctx context.Context) error {
	var n int
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.ReleaseNodeProcesses(s.cfg.NodeID, s.clock())
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("server processes held by this node before it restarted marked disconnected", "node", s.cfg.NodeID, "processes", n)
	}
	if err := s.BeatNode(ctx); err != nil {
		return err
	}
	return s.AssignFleets(ctx)
}

// StoreReachable reports whether the last heartbeat reached the store and
// is recent; a node answers API calls only while it is. Before the first
// heartbeat it is true (Start has just opened the store).
func (s *Service) StoreReachable() error {
	s.node.mu.Lock()
	defer s.node.mu.Unlock()
	if s.node.beatErr != nil {
		return s.node.beatErr
	}
	if !s.node.beatAt.IsZero() && time.Since(s.node.beatAt) > storeFresh {
		return context.DeadlineExceeded
	}
	return nil
}

// SetDraining marks this node as draining (recorded at the next beat).
func (s *Service) SetDraining(on bool) {
	s.node.mu.Lock()
	s.node.draining = on
	s.node.mu.Unlock()
}

// Draining reports whether this node is draining.
func (s *Service) Draining() bool {
	s.node.mu.Lock()
	defer s.node.mu.Unlock()
	return s.node.draining
}

// LeaveCluster removes this node's record on a clean shutdown, so the
// processes it still holds are orphaned at once rather than after NodeTTL.
func (s *Service) LeaveCluster(ctx context.Context) error {
	if err := s.HandOffFleets(ctx); err != nil {
		s.log.Warn("handing fleets to other nodes", "err", err)
	}
	return s.update(ctx, func(tx store.Tx) error { return tx.DeleteNode(s.cfg.NodeID) })
}
