package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// SchemaVersion is the number a migration's name starts with: 170 for
// "170_matchmaking_tickets.sql". A name without one counts as 0.
func SchemaVersion(name string) int {
	digits := name
	if i := strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = name[:i]
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return n
}

// SchemaTooNewError says a store holds migrations this binary does not
// know: a newer anylift has upgraded it, and this one would misread it.
type SchemaTooNewError struct {
	// Store names the store (a file, or a PostgreSQL address without its
	// password); the backend fills it in.
	Store string
	// Version is the store's schema version, Known this binary's.
	Version, Known int
	// Unknown lists the store's migrations this binary lacks.
	Unknown []string
}

func (e *SchemaTooNewError) Error() string {
	where := e.Store
	if where == "" {
		where = "(unnamed)"
	}
	if e.Version > e.Known {
		return fmt.Sprintf("the store at %s has schema version %d, newer than this anylift knows (%d): upgrade anylift", where, e.Version, e.Known)
	}
	// Same or lower number, different migrations: another build's store.
	names := e.Unknown
	more := ""
	if len(names) > 5 {
		names, more = names[:5], fmt.Sprintf(" and %d more", len(names)-5)
	}
	return fmt.Sprintf("the store at %s has migrations this anylift does not know (%s%s): it was written by another anylift build; run that build or a newer one", where, strings.Join(names, ", "), more)
}

// KnownSchema returns the migrations in fsys, sorted, and the highest
// schema version among them.
func KnownSchema(fsys fs.FS) (names []string, version int, err error) {
	names, err = fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(names)
	for _, n := range names {
		version = max(version, SchemaVersion(n))
	}
	return names, version, nil
}

// CheckSchema returns a *SchemaTooNewError when applied (the names in a
// store's schema_migrations) holds a migration not in known.
func CheckSchema(applied, known []string, knownVersion int) error {
	have := make(map[string]bool, len(known))
	for _, n := range known {
		have[n] = true
	}
	var unknown []string
	version := 0
	for _, n := range applied {
		version = max(version, SchemaVersion(n))
		if !have[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &SchemaTooNewError{Version: version, Known: knownVersion, Unknown: unknown}
}

// AppliedMigrations reads the names in schema_migrations through q.
func AppliedMigrations(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// checkSchema refuses a store that a newer anylift has migrated.
func (db *DB) checkSchema(ctx context.Context, fsys fs.FS) error {
	known, version, err := KnownSchema(fsys)
	if err != nil {
		return err
	}
	applied, err := AppliedMigrations(ctx, db.write)
	if err != nil {
		return fmt.Errorf("reading schema_migrations: %w", err)
	}
	return CheckSchema(applied, known, version)
}
