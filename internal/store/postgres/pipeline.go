package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/anylift/anylift/internal/store/sqldb"
)

// pipeline sends stmts in one batch on the transaction's connection: pgx
// writes them all, then one Sync, and reads their results in order.
// After a failure PostgreSQL skips the rest of the batch.
func pipeline(ctx context.Context, driverConn any, stmts []sqldb.Statement) (int, error) {
	c, ok := driverConn.(*stdlib.Conn)
	if !ok {
		return 0, fmt.Errorf("pipeline: driver connection is %T", driverConn)
	}
	// The batch's queries in one allocation (Batch.Queue makes one each).
	qs := make([]pgx.QueuedQuery, len(stmts))
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, len(stmts))}
	for i, s := range stmts {
		qs[i] = pgx.QueuedQuery{SQL: s.Query, Arguments: s.Args}
		if s.Guard {
			// No row changed (or selected): a division by zero stops the
			// pipeline here.
			q := s.Query
			if !s.Selects {
				q += " RETURNING 1"
			}
			qs[i].SQL = "WITH w AS (" + q + ") SELECT 1 / count(*) FROM w"
		}
		b.QueuedQueries[i] = &qs[i]
	}
	br := c.Conn().SendBatch(ctx, b)
	for i, s := range stmts {
		if s.Each != nil {
			if err := each(br, s.Each); err != nil {
				br.Close()
				return i, err
			}
			continue
		}
		if s.Scan != nil {
			if err := s.Scan(row{br.QueryRow()}); err != nil {
				br.Close()
				return i, err
			}
			continue
		}
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			var e *pgconn.PgError
			if s.Guard && errors.As(err, &e) && e.Code == "22012" {
				err = sqldb.ErrUnchanged
			}
			return i, err
		}
		if s.Affected != nil {
			*s.Affected = tag.RowsAffected() // a guard's: its one row, for one or more changed
		}
	}
	return len(stmts), br.Close()
}

// row reports a query of no rows as database/sql does.
type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// each hands each row of the batch's next result to fn.
func each(br pgx.BatchResults, fn func(sqldb.Row) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	rows.Close()
	return rows.Err()
}
