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
// it run at once: the job's savepoint undoes what it did. The failure is
// the job's for good (Tx.failed): a job that goes on after the statement
// that carried it failed (its error taken for "not found", say) still
// fails, and commits nothing.

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
}

// Row is a result row to scan.
type Row interface{ Scan(dest ...any) error }

// queued is a statement waiting to be sent, and what its outcome means to
// the job: check turns (rows affected, error) into the job's error. A
// statement with scan is a query of one row, which scan receives before
// check runs (n is then 0).
type queued struct {
	q     string
	args  []any
	scan  func(Row) error
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

// laterRow is later for a query of one row: scan receives the row
// (sql.ErrNoRows when there is none; its error fails the job), then check
// the outcome. Without a pipeline it runs at once.
func (t *Tx) laterRow(scan func(Row) error, check func(err error) error, q string, args ...any) error {
	if t.conn == nil {
		return check(scan(t.queryRow(q, args...)))
	}
	t.sent++
	t.pipe = append(t.pipe, queued{q: t.db.rebind(q), args: args, scan: scan,
		check: func(_ int64, err error) error { return check(err) }})
	return nil
}

// flush sends the queued statements, then last when it is not nil, in
// one round trip, and reports the first failure. A queued statement's
// failure also fails the running job for good (t.failed); last's is
// its caller's to judge (a row not found, say).
func (t *Tx) flush(last *Statement) error {
	stmts := make([]Statement, 0, len(t.pipe)+1)
	counts := make([]int64, len(t.pipe))
	for i, p := range t.pipe {
		if p.scan != nil {
			stmts = append(stmts, Statement{Query: p.q, Args: p.args, Scan: p.scan})
			continue
		}
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
		if t.failed == nil {
			t.failed = raw
		}
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
		if t.failed == nil {
			t.failed = first
		}
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
