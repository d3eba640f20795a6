package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/anylift/anylift/internal/store"
)

// Group commit for a single-writer database (SQLite), and for a node on
// PostgreSQL that owns its fleets (the only writer of their rows, so its
// transactions rarely wait for anyone else's). Write transactions
// queue for one committer goroutine, which runs as many as are waiting,
// each under its own savepoint, in one database transaction, and commits
// them together: one WAL sync for the batch instead of one per caller. A
// transaction whose function fails is rolled back to its savepoint alone.
// Every caller hears its answer only after the batch's commit, so nothing
// is acknowledged before it is durable; if the commit fails, every
// transaction of the batch fails.

// maxBatch bounds the transactions committed together.
const maxBatch = 32

// job is one queued write transaction.
type job struct {
	fn   func(store.Tx) error
	done chan error
}

var errClosed = errors.New("store is closed")

// EnableGroupCommit makes Update queue its transactions for one committer
// goroutine, which Close stops. Call it once, before the DB is used.
func (db *DB) EnableGroupCommit() {
	db.jobs = make(chan *job)
	db.committerDone = make(chan struct{})
	go db.committer()
}

// Grouped reports whether writes are committed in groups: one
// transaction at a time, so a write never commits while another is open.
func (db *DB) Grouped() bool { return db.jobs != nil }

// updateBatched queues fn and waits for the batch holding it to commit.
// It waits even if ctx ends meanwhile: by then fn may be committed, and
// the caller must not hear "no" for a write that happened.
func (db *DB) updateBatched(ctx context.Context, fn func(store.Tx) error) error {
	j := &job{fn: fn, done: make(chan error, 1)}
	select {
	case db.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.committerDone:
		return errClosed
	}
	return <-j.done
}

func (db *DB) committer() {
	defer close(db.committerDone)
	for {
		var batch []*job
		select {
		case j := <-db.jobs:
			batch = append(batch, j)
		case <-db.stop:
			return
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case j := <-db.jobs:
				batch = append(batch, j)
			default:
				break drain
			}
		}
		db.commitBatch(batch)
	}
}

// commitBatch runs the batch in one transaction. Statements run under a
// background context: cancelling one caller's request must not interrupt
// a statement, which in SQLite would roll back the whole batch.
func (db *DB) commitBatch(batch []*job) {
	deferring := db.dialect.Pipeline != nil && len(batch) > 1
	for attempt := 1; ; attempt++ {
		switch db.tryBatch(batch, attempt < maxAttempts, deferring) {
		case batchDone:
			return
		case batchAbandoned:
			deferring, attempt = false, attempt-1 // once more, each job's statements answered at its end
		}
	}
}

// What tryBatch did with its batch.
const (
	batchDone      = iota // run, committed or not, and every caller answered
	batchRetry            // rolled back for a retryable refusal, nobody answered
	batchAbandoned        // deferring, a statement failed: rolled back, nobody answered
)

// A job's last statements deferred. Pipelined, each job of a batch
// ended with a round trip of its own, to send the statements it had left
// queued (its writes that need no answer) and learn, before the next
// job ran, whether they failed: a job's failure is undone to its
// savepoint alone. That was most of the committer's round trips once
// each job's own reads came from memory: about one per job, 2.15 jobs per
// queue placement. Failures there are rare (a guard that finds a row
// changed behind the memory, which a sole writer never sees), so a batch
// of several jobs first runs deferring: a job that succeeds leaves its
// statements queued, and the next job's savepoint and first statements go
// in the same round trip, the last job's with the COMMIT. If any
// statement then fails, the batch cannot tell whose job it failed in
// time to undo that job alone: the whole batch is rolled back, nobody is
// answered, and it runs again at once without deferring, each job's
// statements answered at its end as before. A job that fails in its own
// code, before any of its statements went, is undone by dropping what it
// queued; after, by its savepoint, as before. Nobody hears an answer
// before the batch's commit either way.

var errAbandon = errors.New("a deferred statement failed: the batch runs again without deferring")

// tryBatch runs the batch in one transaction and answers its callers,
// and reports true; or, when retry allows and PostgreSQL refused one of
// its jobs as a deadlock's victim (or on a serialization check), it
// rolls the whole batch back, answers nobody and reports false, for the
// batch to be run again. The whole batch: the victim's cycle runs through
// the locks its earlier jobs hold, which undoing the victim alone to its
// savepoint would keep (two nodes' batches each waiting on the other's
// earlier jobs would deadlock again at every attempt).
func (db *DB) tryBatch(batch []*job, retry, deferring bool) int {
	ctx := context.Background()
	results := make([]error, len(batch))
	hook := db.commitHook()
	if hook != nil {
		ticket := db.flights.begin()
		defer db.flights.end(ticket)
	}
	answer := func(err error) int {
		for _, j := range batch {
			j.done <- err
		}
		return batchDone
	}
	t := &Tx{db: db, pool: db.write, ctx: ctx, writable: true, feed: hook != nil, docs: map[string]string{}, deferring: deferring}
	var sqlTx *sql.Tx
	if db.dialect.Pipeline != nil {
		// A connection of its own, to reach its driver for pipelines.
		// Its BEGIN is sent with the batch's first statements, and its
		// COMMIT, when it can, with the last job's (pipeline.go).
		c, err := db.write.Conn(ctx)
		if err != nil {
			return answer(err)
		}
		defer c.Close()
		t.conn, t.tx = c, c
	} else {
		var err error
		if sqlTx, err = db.write.BeginTx(ctx, nil); err != nil {
			return answer(err)
		}
		t.tx = sqlTx
	}
	rollback := func() {
		if sqlTx != nil {
			sqlTx.Rollback()
		} else if t.begun {
			t.tx.ExecContext(ctx, "ROLLBACK")
		}
	}
	// abandon rolls the batch back unanswered, for it to run again.
	abandon := func(outcome int) int {
		rollback()
		t.placedCommitted(false)
		t.batchEnded() // its takes are free again
		return outcome
	}
	var changes []store.Change // of the jobs that succeed, in batch order
	var committed bool
	var commitErr error
	for i, j := range batch {
		for again := false; ; again = true {
			t.changes = t.changes[:0]
			committed, commitErr, results[i] = runSavepointOnce(ctx, t, j.fn, i == len(batch)-1)
			t.jobEnded(results[i] == nil)
			// A queue taken as last read that its guard found changed
			// (queues.go): the job, undone, runs once more reading its
			// queues from the store.
			if again || commitErr != nil || !queueMoved(results[i]) {
				break
			}
			t.storeQueues = true
		}
		t.storeQueues = false
		if errors.Is(results[i], errAbandon) || errors.Is(commitErr, errAbandon) {
			return abandon(batchAbandoned)
		}
		if results[i] != nil && retry && db.retryable(results[i]) {
			return abandon(batchRetry)
		}
		if results[i] == nil {
			changes = append(changes, t.changes...)
		}
	}
	switch {
	case commitErr != nil:
	case committed:
	case sqlTx != nil:
		commitErr = sqlTx.Commit()
	case len(t.pipe) > 0:
		// Deferred statements of earlier jobs, the last job having
		// failed without sending them.
		if committed, commitErr = t.send(nil, t.commitSafe()); commitErr == nil && !committed {
			_, commitErr = t.tx.ExecContext(ctx, "COMMIT")
		}
		if commitErr != nil && t.failed != nil {
			return abandon(batchAbandoned)
		}
	case t.begun:
		_, commitErr = t.tx.ExecContext(ctx, "COMMIT")
	}
	if commitErr != nil {
		if sqlTx == nil && t.begun {
			rollback() // the connection is not to go back with a transaction open
		}
		for i := range results {
			if results[i] == nil {
				results[i] = commitErr
			}
		}
	} else if hook != nil && len(changes) > 0 {
		hook(changes) // before any caller hears its answer
	}
	t.placedCommitted(commitErr == nil)
	t.batchEnded() // takes that did not commit are free again, before any answer
	for i, j := range batch {
		j.done <- results[i]
	}
	return batchDone
}

const savepoint = "SAVEPOINT job"

// savepointSent is the check of a job's queued savepoint.
func (t *Tx) savepointSent(_ int64, err error) error {
	t.savepoint = err == nil
	return err
}

// A job's savepoint in a deferring batch. It is needed only to undo the
// job alone when the job fails in its own code after some of its
// statements ran: a job that fails before any of them went drops what it
// queued, and a statement's failure, its own or an earlier job's, rolls
// the whole batch back (errAbandon). Most jobs send nothing before they
// end (their reads come from memory, their writes wait for the next
// job's round trip), and so run without one: a statement fewer, and a
// subtransaction fewer, for each.

// savepointAhead puts the running job's savepoint in the pipeline ahead
// of its first statement, when it is still to be sent and a round trip
// is to carry statements of the job (its queued ones, or one it runs
// now) before the job is over.
func (t *Tx) savepointAhead(jobSends bool) {
	if !t.spPending || !jobSends && len(t.pipe) == t.spAt {
		return
	}
	t.spPending = false
	t.pipe = slices.Insert(t.pipe, t.spAt, queued{q: savepoint, check: t.savepointSent})
}

// runSavepointOnce runs fn under a savepoint, undoing its writes if it
// fails. When last (the batch's last job), a pipelined transaction sends
// the batch's COMMIT with the job's queued statements when none needs an
// answer before it (Tx.commitSafe): committed then reports the commit
// ran, commitErr its failure.
func runSavepointOnce(ctx context.Context, t *Tx, fn func(store.Tx) error, last bool) (committed bool, commitErr, err error) {
	// Locks a job takes are released when it is undone to its savepoint:
	// forget the ones it took, so that the next job takes them again.
	fenced, appending := len(t.fenced), t.appending
	t.lastPlayer.ok = false // a record read by another job is not reused
	undo := func() {
		t.fenced, t.appending, t.props = t.fenced[:fenced], appending, nil
		clear(t.known)
		t.forgetDocs()
	}
	if t.conn != nil {
		// Pipelined: the savepoint goes with the job's first statement,
		// and is never sent for a job that sends none. Deferring, it is
		// sent only ahead of the first round trip that carries the job's
		// statements before the job is over (savepointAhead).
		t.savepoint, t.failed = false, nil
		at, sends := len(t.pipe), t.sends // where the job's statements begin
		if t.deferring {
			t.spAt, t.spPending = at, true
		} else {
			t.later(t.savepointSent, savepoint)
		}
		err := fn(t)
		switch {
		case err != nil && queueMoved(t.failed):
			err = t.failed // whatever the job made of it: it runs again
		case err != nil && t.failed == nil && t.queueGuardQueued():
			// A refusal that may rest on a queue taken as last read
			// stands only once the queue's guard passed (queues.go).
			if ferr := t.flush(nil); queueMoved(ferr) {
				err = ferr
			}
		}
		if err == nil {
			t.spPending = false // what the job left queued goes with a later round trip, undone with the batch
			if t.sends == sends && len(t.pipe) == at+1 && t.pipe[at].q == savepoint {
				t.pipe = t.pipe[:at] // the savepoint alone: nothing to undo
			}
			err = t.failed
		}
		if err == nil && len(t.pipe) > 0 {
			switch {
			case last && t.commitSafe():
				committed, err = t.send(nil, true)
				if err != nil && t.deferring && t.failed != nil {
					undo()
					return false, errAbandon, nil
				}
				if err != nil && (committed || t.failed == nil) {
					// The COMMIT failed, not the job: the batch is
					// gone, and every job of it fails.
					return false, err, nil
				}
			case t.deferring && !last:
				// Left for the next job's first round trip (above).
			default:
				err = t.flush(nil)
			}
		}
		if err == nil {
			err = t.failed
		}
		t.spPending = false
		if t.deferring && t.failed != nil {
			// A statement failed, this job's or one an earlier job
			// deferred: the batch runs again without deferring.
			undo()
			return false, nil, errAbandon
		}
		if err == nil {
			// The savepoint stays until the commit ends them all:
			// releasing it would cost a round trip per job, and a later
			// job's ROLLBACK TO undoes only that job (its savepoint is the
			// newest of the name). A batch holds at most maxBatch of them.
			return committed, nil, nil
		}
		if t.sends == sends {
			// None of the job's statements went: what it queued is
			// dropped, and earlier jobs' deferred statements stay.
			t.pipe = t.pipe[:at]
			undo()
			return false, nil, err
		}
		t.pipe = t.pipe[:0]
		if t.savepoint {
			t.tx.ExecContext(ctx, "ROLLBACK TO job")
			t.tx.ExecContext(ctx, "RELEASE job")
		}
		undo()
		return false, nil, err
	}
	if _, err := t.tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
		return false, nil, err
	}
	if err := fn(t); err != nil {
		t.tx.ExecContext(ctx, "ROLLBACK TO job")
		t.tx.ExecContext(ctx, "RELEASE job")
		undo()
		return false, nil, err
	}
	if t.db.dialect.Name == "postgres" {
		return false, nil, nil // as above
	}
	_, err = t.tx.ExecContext(ctx, "RELEASE job")
	return false, nil, err
}
