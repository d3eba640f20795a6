// Package owned keeps in memory the live state of the fleets this node
// owns when several nodes share PostgreSQL with fleet ownership: their
// live game sessions (internal/live) and server processes
// (internal/fleetstate), so that their reads are answered from memory as
// on SQLite (docs/architecture.md, "The read path on PostgreSQL").
//
// Only the owner of a fleet writes it (the store fences every other
// node's writes), so this node's commit feed sees every write of the
// fleets it owns, and of those only. Memory follows a fleet from the
// moment the node gains it (Gain, from owners.Map.OnGain) until it loses
// it (Lose):
//
//   - On Gain the fleet stops being answered from memory at once, and
//     the changes of it the feed brings are kept aside. The loader (Run)
//     then reads the fleet's live sessions and processes in one snapshot
//     of the store, waits until every write transaction begun before the
//     snapshot has reached the feed (sqldb.DB.WaitPassed), reads from the
//     same snapshot the rows those kept changes name that the snapshot
//     did not hold live (so that a change older than the snapshot never
//     brings back a row the snapshot had ended), and applies the kept
//     changes over it. Each change carries its row's version, and the
//     memories keep the newest, so the order in which commits reach the
//     feed does not matter. The fleet is then answered from memory.
//   - A fleet this node creates is gained from within the transaction
//     that creates it (the store gives it the fleet's first lease), and
//     loaded as any other once that transaction has committed.
//   - On Lose the fleet stops being answered at once, and is dropped.
//   - Changes of fleets this node does not follow are ignored.
package owned

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// maxBatch bounds the fleets loaded from one snapshot.
const maxBatch = 64

// retryAfter is how long the loader waits before loading again fleets
// whose load failed (the store unreachable, say); they are answered by
// the store meanwhile.
const retryAfter = time.Second

// Memory routes the commit feed to the memories of the fleets this node
// follows, and loads and drops fleets as the node gains and loses them.
type Memory struct {
	db       *sqldb.DB
	sessions *live.Sessions
	procs    *fleetstate.State
	log      *slog.Logger

	mu     sync.Mutex
	fleets map[string]*fleet
	queue  []job
	wake   chan struct{}

	// afterSnapshot, when set (tests), runs once a load has read its
	// snapshot, before it waits for the transactions begun before.
	afterSnapshot func()
}

// fleet is a fleet this node follows.
type fleet struct {
	// loaded: the memories hold the fleet and follow the feed. Until
	// then the feed's changes of it are kept in kept, and loading says
	// the loader is at it.
	loaded, loading bool
	kept            []store.Change
}

// job is a fleet to load (f, the state it loads) or to drop (f nil).
type job struct {
	id string
	f  *fleet
}

// Follow makes the node whose ownership of fleets m tracks hold the
// fleets it owns in l and fs: it tells them db's horizon, makes the
// Memory it returns db's commit hook and m's hooks, and runs its loader
// until db closes. Call it before db serves writes and before m is
// refreshed.
func Follow(db *sqldb.DB, m *owners.Map, l *live.Sessions, fs *fleetstate.State, log *slog.Logger) *Memory {
	l.SetHorizon(db)
	fs.SetHorizon(db)
	mem := New(db, l, fs, log)
	db.SetCommitHook(mem.Apply)
	m.OnGain(mem.Gain)
	m.OnLose(mem.Lose)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		<-db.Closing()
		cancel()
	}()
	go func() {
		defer close(done)
		mem.Run(ctx)
	}()
	db.OnClose(func() error {
		<-done
		return nil
	})
	return mem
}

// New returns a Memory over db feeding sessions and procs, which must be
// empty; it follows no fleet until Gain. Set its Apply as db's commit
// hook, and tell sessions and procs db's horizon (SetHorizon).
func New(db *sqldb.DB, sessions *live.Sessions, procs *fleetstate.State, log *slog.Logger) *Memory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Memory{db: db, sessions: sessions, procs: procs, log: log, fleets: map[string]*fleet{}, wake: make(chan struct{}, 1)}
}

// Gain follows fleet id, which this node now owns (at epoch, which a new
// gain changes): it is no longer answered from memory until it is loaded
// afresh, and the store forgets the fleets and computes it kept
// (sqldb.DB.ForgetRecords). It is quick: the load is the loader's (Run).
func (m *Memory) Gain(id string, epoch int64) {
	m.mu.Lock()
	f := &fleet{}
	m.fleets[id] = f
	m.hide(id)
	m.queue = append(m.queue, job{id, f})
	m.mu.Unlock()
	m.db.ForgetRecords()
	m.signal()
}

// Lose stops following fleet id: it is no longer answered from memory,
// the store forgets the fleets and computes it kept, and the loader drops
// it.
func (m *Memory) Lose(id string) {
	m.mu.Lock()
	delete(m.fleets, id)
	m.hide(id)
	m.queue = append(m.queue, job{id: id})
	m.mu.Unlock()
	m.db.ForgetRecords()
	m.signal()
}

// hide stops answering fleet id from memory; m.mu is held.
func (m *Memory) hide(id string) {
	m.sessions.Hide(id)
	m.procs.Hide(id)
}

func (m *Memory) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Sessions is the memory of the live game sessions fed.
func (m *Memory) Sessions() *live.Sessions { return m.sessions }

// Processes is the memory of the live processes fed.
func (m *Memory) Processes() *fleetstate.State { return m.procs }

// Loaded reports whether fleet id is answered from memory.
func (m *Memory) Loaded(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.fleets[id]
	return f != nil && f.loaded
}

// Apply is the commit hook: it applies the changes of the fleets loaded,
// keeps those of the fleets being loaded, and ignores the others.
func (m *Memory) Apply(changes []store.Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var now []store.Change
	for _, c := range changes {
		id := fleetOf(c)
		f := m.fleets[id]
		switch {
		case f == nil:
			continue
		case f.loaded:
			now = append(now, c)
		default:
			f.kept = append(f.kept, c)
		}
		if c.Kind == store.FleetDelete {
			// Nothing more of it will be written: drop it once its
			// deletion is applied.
			delete(m.fleets, id)
			m.queue = append(m.queue, job{id: id})
			m.signal()
		}
	}
	if len(now) > 0 {
		m.sessions.Apply(now)
		m.procs.Apply(now)
	}
}

// fleetOf returns the id of the fleet a change is of.
func fleetOf(c store.Change) string {
	switch c.Kind {
	case store.SessionPut:
		return c.Session.FleetID
	case store.SessionSeats:
		id, _, _ := game.ParseGameSessionARN(c.ID)
		return id
	}
	return c.ID // FleetPut, FleetDelete, ProcessPut
}

// Run loads and drops fleets as they are gained and lost, until ctx ends.
func (m *Memory) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		for ctx.Err() == nil {
			m.mu.Lock()
			jobs := m.queue
			m.queue = nil
			m.mu.Unlock()
			if len(jobs) == 0 {
				break
			}
			m.work(ctx, jobs)
		}
	}
}

// work does jobs in order: loads in batches, drops between them.
func (m *Memory) work(ctx context.Context, jobs []job) {
	var batch []job
	flush := func() {
		if len(batch) > 0 {
			m.load(ctx, batch)
			batch = nil
		}
	}
	for _, j := range jobs {
		if j.f == nil {
			flush()
			m.drop(j.id)
			continue
		}
		batch = append(batch, j)
		if len(batch) == maxBatch {
			flush()
		}
	}
	flush()
}

// drop forgets fleet id, unless it was gained again since it was lost
// (its load then starts afresh).
func (m *Memory) drop(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fleets[id] == nil {
		m.sessions.DropFleet(id)
		m.procs.DropFleet(id)
	}
}

// load loads the fleets of jobs from one snapshot (see the package
// comment). A fleet lost or gained again meanwhile is left to the jobs
// that follow; the fleets of a load that fails are loaded again later.
func (m *Memory) load(ctx context.Context, jobs []job) {
	var ids []string
	var fs []*fleet
	m.mu.Lock()
	for _, j := range jobs {
		if m.fleets[j.id] != j.f || j.f.loaded || j.f.loading {
			continue
		}
		// What was kept so far committed before the snapshot, which
		// has it: from here on, what comes is kept for the load.
		j.f.loading, j.f.kept = true, nil
		m.sessions.Loading(j.id)
		m.procs.Loading(j.id)
		ids = append(ids, j.id)
		fs = append(fs, j.f)
	}
	m.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	start := time.Now()
	var loaded []string
	defer func() {
		// Runs after m.mu is released below. The placed placements of
		// the fleets loaded come from the store too: the placements in
		// flight that an activation reads (sqldb.DB.LoadPlaced).
		if len(loaded) > 0 {
			if err := m.db.LoadPlaced(ctx, loaded); err != nil && ctx.Err() == nil {
				m.log.Warn("loading placed placements of owned fleets", "fleets", len(loaded), "err", err)
			}
		}
	}()
	var rows []store.Change
	err := m.db.ReadSnapshot(ctx, func(snap *sqldb.Snapshot) error {
		if err := m.base(snap, ids); err != nil {
			return err
		}
		// Every transaction that committed before the snapshot began
		// before this mark; once they have all reached the feed, every
		// change of these fleets older than the snapshot is kept.
		mark := m.db.Mark()
		if m.afterSnapshot != nil {
			m.afterSnapshot()
		}
		if err := m.db.WaitPassed(ctx, mark); err != nil {
			return err
		}
		sessions, procs := m.unknown(ids, fs)
		return snap.Rows(sessions, procs, func(c store.Change) error {
			rows = append(rows, c)
			return nil
		})
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		var again []job
		for i, id := range ids {
			fs[i].loading, fs[i].kept = false, nil
			again = append(again, job{id, fs[i]})
		}
		if ctx.Err() == nil {
			m.log.Warn("loading owned fleets into memory", "fleets", len(ids), "err", err)
			time.AfterFunc(retryAfter, func() {
				m.mu.Lock()
				m.queue = append(m.queue, again...)
				m.mu.Unlock()
				m.signal()
			})
		}
		return
	}
	byFleet := map[string][]store.Change{}
	for _, c := range rows {
		byFleet[fleetOf(c)] = append(byFleet[fleetOf(c)], c)
	}
	for i, id := range ids {
		f := fs[i]
		f.loading = false
		if m.fleets[id] != f {
			continue // lost meanwhile: a drop or another load follows
		}
		changes := append(byFleet[id], f.kept...)
		m.sessions.Finish(id, changes)
		m.procs.Finish(id, changes)
		f.loaded, f.kept = true, nil
		loaded = append(loaded, id)
	}
	m.log.Debug("owned fleets loaded into memory", "fleets", len(ids), "took", time.Since(start).Round(time.Millisecond))
}

// base applies the fleets' rows as the snapshot has them, in batches.
func (m *Memory) base(snap *sqldb.Snapshot, ids []string) error {
	const batch = 1024
	buf := make([]store.Change, 0, batch)
	flush := func() {
		m.sessions.Apply(buf)
		m.procs.Apply(buf)
		buf = buf[:0]
	}
	err := snap.Fleets(ids, func(c store.Change) error {
		buf = append(buf, c)
		if len(buf) == batch {
			flush()
		}
		return nil
	})
	if err == nil {
		flush()
	}
	return err
}

// unknown lists the game sessions and processes the kept changes of the
// fleets name that the memories do not hold: rows the snapshot did not
// hold live.
func (m *Memory) unknown(ids []string, fs []*fleet) ([]string, []store.ProcessKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sessions []string
	var procs []store.ProcessKey
	seenS, seenP := map[string]bool{}, map[store.ProcessKey]bool{}
	for i, id := range ids {
		if m.fleets[id] != fs[i] {
			continue
		}
		for _, c := range fs[i].kept {
			switch c.Kind {
			case store.SessionPut, store.SessionSeats:
				if !seenS[c.ID] && !m.sessions.HasSession(c.ID) {
					sessions = append(sessions, c.ID)
				}
				seenS[c.ID] = true
			case store.ProcessPut:
				k := store.ProcessKey{FleetID: c.Process.FleetID, ComputeName: c.Process.ComputeName, PID: c.Process.PID}
				if !seenP[k] && !m.procs.HasProcess(k) {
					procs = append(procs, k)
				}
				seenP[k] = true
			}
		}
	}
	return sessions, procs
}
