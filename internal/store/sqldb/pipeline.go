package sqldb

import (
	"database/sql"
	"errors"
	"fmt"
)

// Pipelining, for grouped writes on PostgreSQL. The one committer runs
// its jobs' statements one after another, and each statement is a round
// trip to the database. A statement whose outcome the job does not need
// at once (a savepoint, an update whose only use of its row count is to
// fail the job) is queued instead (Tx.later), and sent in the same round
// trip as the job's next statement that needs its answer, or when the job
// ends. A queued statement that fails fails its job, as it would have had
// it run at once: the job's savepoint undoes what it did. The failure is
// the job's for good (Tx.failed): a job that goes on after the statement
// that carried it failed (its error taken for "not found", say) still
// fails, and commits nothing. The batch's BEGIN goes in its first
// pipeline, and its COMMIT, when the last job's queued statements allow
// it (queued), in the same round trip as those.

// Statement is one statement of a pipeline (Dialect.Pipeline).
type Statement struct {
	Query string // rebound for the dialect
	Args  []any
	// Scan, when set, receives the statement's one row (sql.ErrNoRows
	// when it has none); Each, when set, receives each of its rows in
	// turn; otherwise the statement is run for its row count, which
	// Affected receives when set. An error of Scan or Each stops the
	// pipeline there, as the statement's failure would.
	Scan     func(Row) error
	Each     func(Row) error
	Affected *int64
	// Guard, for a write: one that changes no row fails in the database,
	// stopping the pipeline there (and what follows, a COMMIT say), and
	// is reported as ErrUnchanged.
	Guard bool
	// Selects, with Guard: the statement is a query (SELECT … FOR
	// SHARE, say), whose rows count as the rows a write changes.
	Selects bool
}

// ErrUnchanged is a guarded write's failure (Statement.Guard).
var ErrUnchanged = errors.New("the write changed no row")

// Row is a result row to scan.
type Row interface{ Scan(dest ...any) error }

// queued is a statement waiting to be sent, and what its outcome means to
// the job: check turns (rows affected, error) into the job's error. A
// statement with scan is a query of one row, which scan receives before
// check runs (n is then 0).
//
// A statement queued by later or laterGuarded fails its job only by
// failing in the database, or (guarded) by changing no row: the pipeline
// that carries it may carry the batch's COMMIT too (Tx.send), the
// guard then checked by the database. One whose check judges its answer
// (the fence's lease read) is not safe so, and keeps the COMMIT for a
// round trip of its own.
type queued struct {
	q       string
	args    []any
	scan    func(Row) error
	check   func(n int64, err error) error
	guarded bool // the job fails if it changes no row
	judged  bool // check may fail the job on the answer alone
	selects bool // guarded, and a query: its rows count as changed
	// queueGuard: the guard of a queue taken as last read, by name, and
	// the document it holds the queue to (queues.go).
	queueGuard, queueDoc string
}

// later runs q now, or queues it when the transaction pipelines, and
// passes its row count and error through check (nil: the error as is).
// check must accept every outcome without an error (laterGuarded is for
// a statement that must change a row).
func (t *Tx) later(check func(n int64, err error) error, q string, args ...any) error {
	return t.queue(queued{q: q, args: args, check: check})
}

// laterGuarded is later for a write that must change a row: one that
// changes none fails the job with miss().
func (t *Tx) laterGuarded(miss func() error, q string, args ...any) error {
	return t.queue(queued{q: q, args: args, guarded: true, check: func(n int64, err error) error {
		if err == nil && n == 0 {
			return miss()
		}
		return err
	}})
}

func (t *Tx) queue(p queued) error {
	t.sent++
	if p.check == nil {
		p.check = func(_ int64, err error) error { return err }
	}
	if t.conn == nil {
		res, err := t.exec(p.q, p.args...)
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		return p.check(n, err)
	}
	p.q = t.db.rebind(p.q)
	t.pipe = append(t.pipe, p)
	return nil
}

// laterRow is later for a query of one row: scan receives the row
// (sql.ErrNoRows when there is none; its error fails the job), then check
// the outcome. judged says check may fail the job on a row that scan
// took (see queued). Without a pipeline it runs at once.
func (t *Tx) laterRow(scan func(Row) error, check func(err error) error, judged bool, q string, args ...any) error {
	if t.conn == nil {
		return check(scan(t.queryRow(q, args...)))
	}
	t.sent++
	t.pipe = append(t.pipe, queued{q: t.db.rebind(q), args: args, scan: scan, judged: judged,
		check: func(_ int64, err error) error { return check(err) }})
	return nil
}

// unbegun reports a pipelined transaction whose BEGIN is still to be
// sent: it goes with the transaction's first statements.
func (t *Tx) unbegun() bool { return t.conn != nil && !t.begun }

// flush sends the queued statements, then last when it is not nil, in
// one round trip, and reports the first failure. A queued statement's
// failure also fails the running job for good (t.failed); last's is
// its caller's to judge (a row not found, say). The transaction's BEGIN,
// if not yet sent, goes first.
func (t *Tx) flush(last *Statement) error {
	_, err := t.send(last, false)
	return err
}

// send is flush; with commit, last is nil and the batch's COMMIT goes
// after the queued statements, each guarded one made to fail in the
// database when it changes no row, so that nothing the job's checks
// would refuse is committed. committed reports the COMMIT ran; when the
// pipeline failed at the COMMIT itself, err is its failure and no
// queued statement's (t.failed stays nil).
func (t *Tx) send(last *Statement, commit bool) (committed bool, err error) {
	t.sends++
	t.savepointAhead(last != nil)
	pre := 0
	if !t.begun {
		pre = 1
	}
	// The buffers are the transaction's, taken for this send (a nested
	// one would make its own) and given back cleared.
	stmts, counts := t.sending[:0], t.counts[:0]
	t.sending, t.counts = nil, nil
	defer func() {
		clear(stmts)
		t.sending, t.counts = stmts[:0], counts
	}()
	counts = append(counts, make([]int64, len(t.pipe))...)
	if pre == 1 {
		stmts = append(stmts, Statement{Query: "BEGIN"})
	}
	for i, p := range t.pipe {
		switch {
		case p.scan != nil:
			stmts = append(stmts, Statement{Query: p.q, Args: p.args, Scan: p.scan})
		default:
			stmts = append(stmts, Statement{Query: p.q, Args: p.args, Affected: &counts[i], Guard: commit && p.guarded, Selects: p.selects})
		}
	}
	if last != nil {
		stmts = append(stmts, *last)
	}
	if commit {
		stmts = append(stmts, Statement{Query: "COMMIT"})
	}
	pipe := t.pipe
	t.pipe = t.pipe[:0]
	t.spAt = 0 // a job's statements queued from now on begin the pipeline
	t.lastWrite = nil
	var failed int
	raw := t.conn.Raw(func(driverConn any) error {
		failed, err = t.db.dialect.Pipeline(t.ctx, driverConn, stmts)
		return nil
	})
	if raw != nil {
		if t.failed == nil {
			t.failed = raw
		}
		return false, raw
	}
	if err == nil || failed >= pre {
		t.begun = true
	}
	failed -= pre
	if err != nil && failed < 0 {
		// BEGIN failed: nothing of the job ran.
		if t.failed == nil {
			t.failed = err
		}
		return false, err
	}
	// The statements before the failure ran; the one that failed is
	// checked with its error (a guard's as a row not changed); those
	// after it did not run.
	var first error
	for i, p := range pipe {
		var e error
		switch {
		case err == nil || i < failed:
			e = p.check(counts[i], nil)
		case i == failed && errors.Is(err, ErrUnchanged):
			e = p.check(0, nil)
		case i == failed:
			e = p.check(0, err)
		}
		if first == nil {
			first = e
		}
	}
	if commit && err == nil {
		if first != nil {
			// Cannot be: a queued statement fails its job only by
			// failing in the database, before the COMMIT (see queued).
			return true, fmt.Errorf("a check refused a write already committed: %w", first)
		}
		return true, nil
	}
	if first != nil {
		if t.failed == nil {
			t.failed = first
		}
		return false, first
	}
	return false, err // last's failure, or the COMMIT's
}

// commitSafe reports whether what the job queued may go with the
// batch's COMMIT (see queued).
func (t *Tx) commitSafe() bool {
	for _, p := range t.pipe {
		if p.judged {
			return false
		}
	}
	return true
}

// sendQueued sends what is queued, if anything, and the transaction's
// BEGIN if it is still to be sent: a statement run outside the pipeline
// follows.
func (t *Tx) sendQueued() error {
	if !t.piping() {
		return nil
	}
	t.savepointAhead(true) // the statement that follows is the job's
	return t.flush(nil)
}

// piping reports whether the transaction's next statement must go
// through the pipeline: statements wait there, its BEGIN or the running
// job's savepoint among them, to go first.
func (t *Tx) piping() bool { return len(t.pipe) > 0 || t.unbegun() || t.spPending }

// execPiped runs q in the same round trip as the queued statements.
func (t *Tx) execPiped(q string, args []any) (sql.Result, error) {
	var n int64
	err := t.flush(&Statement{Query: t.db.rebind(q), Args: args, Affected: &n})
	if err != nil {
		return nil, err
	}
	return rowsAffected(n), nil
}

// pipedRow is a one-row query sent, when it is scanned, in the same round
// trip as the statements queued before it.
type pipedRow struct {
	t    *Tx
	q    string
	args []any
}

func (r pipedRow) Scan(dest ...any) error {
	return r.t.flush(&Statement{Query: r.t.db.rebind(r.q), Args: r.args, Scan: func(row Row) error { return row.Scan(dest...) }})
}

// each runs q, a query of many rows, and hands each row to fn. In a
// pipelined transaction it goes in the same round trip as the statements
// queued before it (the job's savepoint, say).
func (t *Tx) each(fn func(Row) error, q string, args ...any) error {
	if t.conn != nil {
		t.sent++
		return t.flush(&Statement{Query: t.db.rebind(q), Args: args, Each: fn})
	}
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rowsAffected is an exec's result in a pipeline.
type rowsAffected int64

func (n rowsAffected) LastInsertId() (int64, error) { return 0, errNoLastInsertID }
func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

var errNoLastInsertID = errors.New("no LastInsertId in a pipeline")
