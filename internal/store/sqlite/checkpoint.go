package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync/atomic"

	"modernc.org/sqlite"
)

// Checkpoints off the writer. In WAL mode every commit appends the pages
// it changed to the write-ahead log, and a checkpoint copies them back
// into the database file and syncs it. SQLite runs a checkpoint inside
// the commit that takes the log past wal_autocheckpoint pages, on the
// writer's connection: with group commit that is the committer, which
// every write of the server waits for, so one batch in every few dozen
// also paid for copying and syncing a thousand pages (a tenth of the
// committer's time under CreatePlayerSession, measured).
//
// Instead, the writer counts its commits, and every checkpointEvery
// commits a checkpointer goroutine runs a PASSIVE checkpoint on a
// connection of its own, while the committer goes on writing: SQLite lets
// one checkpoint run beside the writer, and the writer starts the log
// over at its next transaction once a checkpoint has copied all of it.
// Durability does not change: a commit is synced in the log before it is
// acknowledged, and a checkpoint only copies committed pages. The
// writer keeps an automatic checkpoint as a bound (writerAutocheckpoint
// pages), for when the checkpointer falls behind or readers keep the log
// from being started over.

// checkpointEvery is how many commits of the writer ask for one
// checkpoint: at the reservation benchmark's batches (about 16 writes of
// four or five pages each) about as many pages as SQLite's default of a
// thousand.
const checkpointEvery = 16

// writerAutocheckpoint bounds the log when the checkpointer falls behind.
const writerAutocheckpoint = 10000

// checkpointer runs the checkpoints the writer's commits ask for.
type checkpointer struct {
	db      *sql.DB     // one connection
	armed   atomic.Bool // once the store is migrated
	commits atomic.Int64
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed is the writer's commit hook: once armed, it counts the commit
// and wakes the checkpointer every checkpointEvery commits. It runs on the writer's
// connection inside SQLite's commit, so it only signals.
func (c *checkpointer) committed() int32 {
	if c.armed.Load() && c.commits.Add(1)%checkpointEvery == 0 {
		select {
		case c.wake <- struct{}{}:
		default: // a checkpoint is already asked for
		}
	}
	return 0 // let the commit go on
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
		case <-c.stop:
			return
		}
		// A failed or partial checkpoint (a reader on an old snapshot) is
		// taken up again by the next one; the writer's bound stays.
		var busy, log, copied int
		err := c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
		if checkpointed != nil {
			checkpointed(log, copied, err)
		}
	}
}

// checkpointed, when set (by tests, before a store opens), hears of each
// checkpoint of the checkpointer: the log's frames, those copied.
var checkpointed func(log, copied int, err error)

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}

// hookedConnector opens connections to dsn that call onCommit at every
// commit.
type hookedConnector struct {
	dsn      string
	drv      *sqlite.Driver
	onCommit func() int32
}

func (h *hookedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := h.drv.Open(h.dsn)
	if err != nil {
		return nil, err
	}
	if c, ok := conn.(interface {
		RegisterCommitHook(sqlite.CommitHookFn)
	}); ok {
		c.RegisterCommitHook(h.onCommit)
	}
	return conn, nil
}

func (h *hookedConnector) Driver() driver.Driver { return h.drv }
