package sqldb

import (
	"database/sql"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// searchCursor is the position after the last session of a page; its
// format is shared with the live state in memory (store.SearchCursor).
type searchCursor = store.SearchCursor

// SearchGameSessions compiles q into SQL: the filter becomes a WHERE
// clause (property conditions are EXISTS probes of
// game_session_properties), the sort an ORDER BY with keyset pagination
// on (sort value, created, pk). A page is one query, or two when sorting
// by a property (sessions with it, then those without). Every value from
// the caller is a bound parameter; only the shape of the query comes
// from the tree.
func (t *Tx) SearchGameSessions(q store.SearchQuery, p store.Page) ([]*game.GameSession, string, error) {
	fp := q.Fingerprint()
	after, err := store.SearchAfter(q, p.Token, fp)
	if err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 20, 0)
	driver, err := t.searchDriver(q.Filter)
	if err != nil {
		return nil, "", err
	}
	parts := []int{partAll}
	if q.Sort != nil && q.Sort.Operand.Field == search.Property {
		parts = []int{partValues, partNulls}
		if after != nil && after.S == nil {
			parts = parts[1:]
		}
	}
	var out []*game.GameSession
	var last searchCursor
	for i, part := range parts {
		if i > 0 {
			after = nil // the next part starts at its beginning
		}
		pl := plan{q: q, after: after, limit: n + 1 - len(out), part: part, driver: driver}
		if out, last, err = t.searchPart(pl, out, last); err != nil || len(out) > n {
			break
		}
	}
	if err != nil || len(out) <= n {
		return out, "", err
	}
	last.Q = fp
	return out[:n], last.Token(), nil
}

// searchPart runs one query of a search, appending to out. last is the
// cursor of the last session it keeps.
func (t *Tx) searchPart(pl plan, out []*game.GameSession, last searchCursor) ([]*game.GameSession, searchCursor, error) {
	b := &sqlBuilder{pg: t.db.dialect.Numbered}
	b.search(pl)
	// Inside a write, what the job has queued goes first (pipeline.go):
	// the search sees it, and it keeps its place before the search.
	if err := t.sendQueued(); err != nil {
		return nil, last, err
	}
	rows, err := t.tx.QueryContext(t.ctx, b.sql.String(), b.args...)
	if err != nil {
		return nil, last, err
	}
	defer rows.Close()
	want := len(out) + pl.limit
	for rows.Next() {
		var prop sql.NullString
		pk, s, err := scanSession(scanExtra{rows, &prop})
		if err != nil {
			return nil, last, err
		}
		if len(out) < want-1 {
			last = cursorAt(pl.q.Sort, s, pk, prop)
		}
		out = append(out, s)
	}
	return out, last, rows.Err()
}

// driverLimit is how many rows of one property value make it too common
// to start a search from: past it, scanning the fleet in the sort's order
// finds a page sooner.
const driverLimit = 1000

// searchDriver returns the most selective property equality among the
// conditions that filter requires (its top-level AND), when it holds for
// fewer than driverLimit sessions; else nil. Each candidate costs one
// probe of the property index, bounded by driverLimit.
func (t *Tx) searchDriver(filter search.Expr) (*search.Cond, error) {
	var best *search.Cond
	bestN := driverLimit
	for _, c := range conjuncts(filter, nil) {
		if c.Operand.Field != search.Property || c.Op != search.Eq {
			continue
		}
		var n int
		b := &sqlBuilder{pg: t.db.dialect.Numbered}
		b.probe(c, driverLimit)
		if err := t.sendQueued(); err != nil {
			return nil, err
		}
		if err := t.tx.QueryRowContext(t.ctx, b.sql.String(), b.args...).Scan(&n); err != nil {
			return nil, err
		}
		if n < bestN {
			best, bestN = c, n
		}
	}
	return best, nil
}

// conjuncts appends to list the conditions that e is an AND of.
func conjuncts(e search.Expr, list []*search.Cond) []*search.Cond {
	switch e := e.(type) {
	case *search.And:
		return conjuncts(e.R, conjuncts(e.L, list))
	case *search.Cond:
		return append(list, e)
	}
	return list
}

// scanExtra scans the session columns and then the sort column.
type scanExtra struct {
	rows  *sql.Rows
	extra any
}

func (s scanExtra) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.extra)...) }

// cursorAt returns the position of session s (row pk) in the order of
// sort; prop is the sorted property's value when sorting by a property.
func cursorAt(sort *search.Sort, s *game.GameSession, pk int64, prop sql.NullString) searchCursor {
	c := searchCursor{C: store.Millis(s.CreationTime), P: pk}
	if sort == nil {
		return c
	}
	num := func(v int64) { c.N = &v }
	str := func(v string) { c.S = &v }
	switch sort.Operand.Field {
	case search.GameSessionID:
		str(s.ID)
	case search.GameSessionName:
		str(s.Name)
	case search.Property:
		if prop.Valid {
			str(prop.String)
		}
	case search.MaximumSessions:
		num(int64(s.MaximumPlayerSessionCount))
	case search.PlayerSessionCount:
		num(int64(s.CurrentPlayerSessionCount))
	case search.CreationTimeMillis:
		num(c.C)
	case search.HasAvailablePlayerSessions:
		num(boolInt(s.CurrentPlayerSessionCount < s.MaximumPlayerSessionCount))
	}
	return c
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
