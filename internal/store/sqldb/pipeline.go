package sqldb

import (
	"database/sql"
	"errors"
)

// Pipelining, for grouped writes on PostgreSQL. The one committer runs
// its jobs' statements one after another, and each statement is a round
// trip to the database. A statement whose outcome the job does not need
// at once (a savepoint, an update whose only use of its row count is to
// fail the job) is queued instead (Tx.later), and sent in the same round
// trip as the job's next statement that needs its answer, or when the job
// ends. A queued statement that fails fails its job, as it would have had
// it run at once: the job's savepoint undoes what it did.

// Statement is one statement of a pipeline (Dialect.Pipeline).
type Statement struct {
	Query string // rebound for the dialect
	Args  []any
	// Scan, when set, receives the statement's one row (sql.ErrNoRows
	// when it has none); otherwise the statement is run for its row count,
	// which Affected receives when set.
	Scan     func(Row) error
	Affected *int64
}

// Row is a result row to scan.
type Row interface{ Scan(dest ...any) error }

// queued is a statement waiting to be sent, and what its outcome means to
// the job: check turns (rows affected, error) into the job's error.
type queued struct {
	q     string
	args  []any
	check func(n int64, err error) error
}

// later runs q now, or queues it when the transaction pipelines, and
// passes its row count and error through check (nil: the error as is).
func (t *Tx) later(check func(n int64, err error) error, q string, args ...any) error {
	t.sent++
	if check == nil {
		check = func(_ int64, err error) error { return err }
	}
	if t.conn == nil {
		res, err := t.exec(q, args...)
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		return check(n, err)
	}
	t.pipe = append(t.pipe, queued{q: t.db.rebind(q), args: args, check: check})
	return nil
}

// flush sends the queued statements, then last when it is not nil, in
// one round trip, and reports the first failure.
func (t *Tx) flush(last *Statement) error {
	stmts := make([]Statement, 0, len(t.pipe)+1)
	counts := make([]int64, len(t.pipe))
	for i, p := range t.pipe {
		stmts = append(stmts, Statement{Query: p.q, Args: p.args, Affected: &counts[i]})
	}
	if last != nil {
		stmts = append(stmts, *last)
	}
	pipe := t.pipe
	t.pipe = t.pipe[:0]
	var failed int
	var err error
	raw := t.conn.Raw(func(driverConn any) error {
		failed, err = t.db.dialect.Pipeline(t.ctx, driverConn, stmts)
		return nil
	})
	if raw != nil {
		return raw
	}
	// The statements before the failure ran; the one that failed is
	// checked with its error; those after it did not run.
	var first error
	for i, p := range pipe {
		var e error
		switch {
		case err == nil || i < failed:
			e = p.check(counts[i], nil)
		case i == failed:
			e = p.check(0, err)
		}
		if first == nil {
			first = e
		}
	}
	if first != nil {
		return first
	}
	return err
}

// sendQueued sends what is queued, if anything.
func (t *Tx) sendQueued() error {
	if len(t.pipe) == 0 {
		return nil
	}
	return t.flush(nil)
}

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

// rowsAffected is an exec's result in a pipeline.
type rowsAffected int64

func (n rowsAffected) LastInsertId() (int64, error) { return 0, errNoLastInsertID }
func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

var errNoLastInsertID = errors.New("no LastInsertId in a pipeline")
