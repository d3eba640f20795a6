package server

import (
	"context"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// loadLive builds the live game sessions in memory from the store and
// feeds them every commit from then on, when this node is the store's
// only writer: SQLite, which one server opens. On PostgreSQL other nodes
// may write the same fleets, which this node's memory would not see, so
// reads stay with the store there (docs/architecture.md).
func (s *Server) loadLive(ctx context.Context) error {
	db, ok := s.store.(*sqldb.DB)
	if !ok || db.Dialect() != "sqlite" {
		return nil
	}
	start := time.Now()
	l := live.New()
	fs, tap, err := loadFleetState(ctx, db)
	if err != nil {
		return err
	}
	// Nothing writes yet: the hook is set before the service runs.
	if err := l.Load(func(visit func(c store.Change) error) error {
		return db.LoadLive(ctx, func(c store.Change) error { tap(c); return visit(c) })
	}); err != nil {
		return fmt.Errorf("loading live game sessions: %w", err)
	}
	db.SetCommitHook(s.fleetStateHook(db, fs, l.Apply))
	db.SetLiveSessionCounts(l)
	s.svc.SetLive(l)
	s.cfg.Log.Info("live game sessions loaded", "sessions", l.Len(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}
