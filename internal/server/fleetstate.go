package server

import (
	"context"
	"fmt"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// loadFleetState builds the live fleet state (the free processes, the
// session each live process hosts, the ACTIVATING count of each compute)
// from db: the processes here, the sessions through tap, which the live
// sessions' load calls for each session it visits. The caller feeds it every commit from then on and
// makes db claim processes from it (fleetStateHook).
func loadFleetState(ctx context.Context, db *sqldb.DB) (*fleetstate.State, func(store.Change), error) {
	fs := fleetstate.New()
	if err := fs.Load(func(visit func(store.Change) error) error { return db.LoadProcesses(ctx, visit) }); err != nil {
		return nil, nil, fmt.Errorf("loading server processes: %w", err)
	}
	return fs, fs.Put, nil
}

// fleetStateHook makes db claim processes from fs, and the service ask fs
// which process hosts which session, and returns the commit hook feeding
// both the live sessions (apply) and fs.
func (s *Server) fleetStateHook(db *sqldb.DB, fs *fleetstate.State, apply func([]store.Change)) func([]store.Change) {
	db.SetLiveProcesses(fs)
	s.ps.SetHosts(fs)
	return func(changes []store.Change) {
		apply(changes)
		fs.Apply(changes)
	}
}
