// Package postgres opens Anylift's store on PostgreSQL (or a compatible
// database) through pgx, for one node or several sharing it.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/anylift/anylift/internal/store/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// poolSize bounds the connections of the shared pool.
const poolSize = 32

// Open connects to the database at dsn (postgres://...) and applies
// migrations. Several nodes may migrate at once: an advisory lock orders
// them.
func Open(ctx context.Context, dsn string) (*sqldb.DB, error) {
	cfg, err := pgxConfig(dsn)
	if err != nil {
		return nil, err
	}
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(poolSize)
	pool.SetMaxIdleConns(poolSize)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	db := sqldb.New(pool, pool, sqldb.Dialect{
		Name:        "postgres",
		Numbered:    true,
		ForUpdate:   " FOR UPDATE",
		IsUnique:    isUnique,
		IsRetryable: isRetryable,
		Pipeline:    pipeline,
	})
	// The heartbeat's own connection: see sqldb.DB.UpdateBeat.
	beat := stdlib.OpenDB(*cfg)
	beat.SetMaxOpenConns(1)
	beat.SetMaxIdleConns(1)
	db.SetBeatPool(beat)
	if err := migrate(ctx, pool, db); err != nil {
		db.Close()
		var tooNew *sqldb.SchemaTooNewError
		if errors.As(err, &tooNew) {
			tooNew.Store = describe(cfg)
		}
		return nil, err
	}
	var schema string
	if err := pool.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("reading the store's schema: %w", err)
	}
	db.SetOutboxSchema(schema)
	return db, nil
}

func migrate(ctx context.Context, pool *sql.DB, db *sqldb.DB) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	const lockID = 0x616e796c696674 // "anylift"
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockID); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, lockID)
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return db.Migrate(ctx, sub)
}

func isUnique(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

func isRetryable(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
}
