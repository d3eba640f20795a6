package server

import (
	"context"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// loadLive builds the live game sessions in memory from the store and
// feeds them every commit from then on, when this node is the store's
// only writer: SQLite, which one server opens. On PostgreSQL other nodes
// may write the same fleets, which this node's memory would not see: its
// memory holds the fleets it owns, with fleet ownership (ownedMemory), and
// reads of the others stay with the store (docs/architecture.md).
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
	db.SetLiveSessions(l)
	db.SetLiveSessionCounts(l)
	s.ss.SetLive(l)
	s.cfg.Log.Info("live game sessions loaded", "sessions", l.Len(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// ownedMemory makes the node hold in memory the live game sessions and
// processes of the fleets it owns, on PostgreSQL with fleet ownership
// (internal/owned): each is loaded from the store when the node gains it
// and dropped when it loses it, and answers the reads of SearchGameSessions
// and DescribeGameSessions, the fleet metrics' counts and a process's
// check of its own session as on SQLite; and, since the node commits its
// writes through one committer (openStore), it claims their free
// processes from memory and reads their processes and game sessions
// there inside its writes, decides the seats of their sessions in
// memory, and keeps their fleet and compute records between its writes.
func (s *Server) ownedMemory(db *sqldb.DB, m *owners.Map) {
	l, fs := live.New(), fleetstate.New()
	s.mem = owned.Follow(db, m, l, fs, s.cfg.Log)
	db.SetLiveSessionCounts(l)
	if db.Grouped() {
		db.SetLiveProcessesFor(fs, s.mem.Loaded)
		db.KeepOwnedRecords() // forgotten at every gain and loss (owned.Memory)
		db.SetLiveSessions(l)
		s.ss.SetLive(l)
	} else {
		s.ss.SetLive(readsOnly{l})
	}
	s.ps.SetHosts(fs)
}

// readsOnly is a memory that answers reads only: the service decides the
// seats of a session in the store, not in memory (sessions' seatKeeper),
// where the node's writes may reach its feed out of order.
type readsOnly struct{ sessions.LiveSessions }

// OwnedMemory is the memory of the fleets the node owns, on PostgreSQL
// with fleet ownership; nil otherwise.
func (s *Server) OwnedMemory() *owned.Memory { return s.mem }
