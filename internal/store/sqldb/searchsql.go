package sqldb

import (
	"strconv"
	"strings"

	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// searchColumns is sessionColumns qualified by the alias g.
var searchColumns = "g." + strings.ReplaceAll(sessionColumns, ", ", ", g.")

// sqlBuilder writes one search query. Values only ever enter the query as
// parameters (param); the text comes from the tree's structure and from
// the constants in this file. Placeholders are numbered as they are
// written ($1, $2, ... on PostgreSQL), so the query is not rebound.
type sqlBuilder struct {
	pg   bool
	sql  strings.Builder
	args []any
}

func (b *sqlBuilder) w(parts ...string) {
	for _, s := range parts {
		b.sql.WriteString(s)
	}
}

// param adds v to the arguments and returns its placeholder.
func (b *sqlBuilder) param(v any) string {
	b.args = append(b.args, v)
	if b.pg {
		return "$" + strconv.Itoa(len(b.args))
	}
	return "?"
}

// boolParam binds a boolean as the backend compares it: PostgreSQL's
// comparisons are booleans, SQLite's are the integers 0 and 1.
func (b *sqlBuilder) boolParam(v bool) string {
	if b.pg {
		return b.param(v)
	}
	return b.param(boolInt(v))
}

// text returns a string expression in the byte order both backends sort
// and compare strings by (SQLite's BINARY; "C" on PostgreSQL, where
// property values have an index in that collation: migration 060).
func (b *sqlBuilder) text(expr string) string {
	if b.pg {
		return expr + ` COLLATE "C"`
	}
	return expr
}

// openSeats is hasAvailablePlayerSessions. Written exactly as in the
// index game_sessions_search_open (PostgreSQL migration 060), so the
// index applies; SQLite dropped it (migration 230): memory answers its
// searches.
const openSeats = "(g.cur_players < g.max_players)"

// The parts of a search. Sorting by a property reads the sessions that
// have it (partValues, in value order, from the property index) and then
// those that lack it (partNulls, in creation order): nulls come last.
const (
	partAll = iota
	partValues
	partNulls
)

// plan is one query of a search.
type plan struct {
	q     store.SearchQuery
	after *searchCursor // nil: from the start of the part
	limit int
	part  int
	// driver, when set, is a selective property equality that every
	// result satisfies; the query then starts from its rows in the
	// property index instead of scanning the fleet.
	driver *search.Cond
}

// probe writes the query counting, up to max, the property rows of c.
func (b *sqlBuilder) probe(c *search.Cond, max int) {
	b.w("SELECT COUNT(*) FROM (SELECT 1 FROM game_session_properties WHERE key = ", b.param(c.Operand.Key),
		" AND ", b.text("value"), " = ", b.param(c.Str), " LIMIT ", b.param(max), ") x")
}

// search writes the whole query of p.
func (b *sqlBuilder) search(p plan) {
	b.w("SELECT ", searchColumns)
	if p.part == partValues {
		b.w(", sp.value FROM ")
	} else {
		b.w(", NULL FROM ")
	}
	// CROSS JOIN fixes the join order on SQLite (PostgreSQL plans it
	// alone): the property index first, then the session by its pk.
	if p.driver != nil {
		b.w("game_session_properties d CROSS JOIN ")
	}
	if p.part == partValues {
		b.w("game_session_properties sp CROSS JOIN ")
	}
	b.w("game_sessions g WHERE ")
	if p.driver != nil {
		b.w("d.key = ", b.param(p.driver.Operand.Key), " AND ", b.text("d.value"), " = ", b.param(p.driver.Str), " AND g.pk = d.session_pk AND ")
	}
	if p.part == partValues {
		b.w("sp.key = ", b.param(p.q.Sort.Operand.Key), " AND g.pk = sp.session_pk AND ")
	}
	if p.part == partNulls {
		b.w("NOT EXISTS (SELECT 1 FROM game_session_properties p WHERE p.session_pk = g.pk AND p.key = ",
			b.param(p.q.Sort.Operand.Key), ") AND ")
	}
	b.w("g.fleet_id = ", b.param(p.q.FleetID), " AND g.status = 'ACTIVE'")
	if p.q.Location != "" {
		b.w(" AND g.location = ", b.param(p.q.Location))
	}
	if p.q.Filter != nil {
		b.w(" AND ")
		b.expr(p.q.Filter)
	}
	if p.after != nil {
		b.w(" AND ")
		b.keyset(p.q.Sort, p.after)
	}
	b.w(" ORDER BY ")
	b.order(p.q.Sort, p.part)
	b.w(" LIMIT ", b.param(p.limit))
}

// expr writes a filter. Every condition is true or false, never NULL, so
// NOT inverts exactly.
func (b *sqlBuilder) expr(e search.Expr) {
	switch e := e.(type) {
	case *search.And:
		b.w("(")
		b.expr(e.L)
		b.w(" AND ")
		b.expr(e.R)
		b.w(")")
	case *search.Or:
		b.w("(")
		b.expr(e.L)
		b.w(" OR ")
		b.expr(e.R)
		b.w(")")
	case *search.Not:
		b.w("NOT (")
		b.expr(e.X)
		b.w(")")
	case *search.Cond:
		b.cond(e)
	}
}

// cond writes one comparison. A property condition holds only for
// sessions that have the property (so = and <> are both false without
// it).
func (b *sqlBuilder) cond(c *search.Cond) {
	op := string(c.Op) // one of the six comparators: the parser admits no other
	switch f := c.Operand.Field; f {
	case search.Property:
		b.w("EXISTS (SELECT 1 FROM game_session_properties p WHERE p.session_pk = g.pk AND p.key = ", b.param(c.Operand.Key),
			" AND ", b.text("p.value"), " ", op, " ", b.param(c.Str), ")")
	case search.HasAvailablePlayerSessions:
		b.w(openSeats, " = ", b.boolParam(c.Bool == (c.Op == search.Eq)))
	case search.GameSessionID, search.GameSessionName:
		b.w(column(f), " ", op, " ", b.param(c.Str))
	default:
		b.w(column(f), " ", op, " ", b.param(c.Num))
	}
}

// column is the expression of a field held in game_sessions.
func column(f search.Field) string {
	switch f {
	case search.GameSessionID:
		return "g.id"
	case search.GameSessionName:
		return "g.name"
	case search.MaximumSessions:
		return "g.max_players"
	case search.PlayerSessionCount:
		return "g.cur_players"
	case search.HasAvailablePlayerSessions:
		return openSeats
	}
	return "g.created"
}

// sortKey returns the sort's expression ("" when the order is creation
// order or a property's), its direction and the keyset comparator.
func (b *sqlBuilder) sortKey(s *search.Sort) (key, dir, cmp string) {
	dir, cmp = "", ">"
	if s != nil && s.Desc {
		dir, cmp = " DESC", "<"
	}
	if s == nil || s.Operand.Field == search.Property || s.Operand.Field == search.CreationTimeMillis {
		return "", dir, cmp
	}
	key = column(s.Operand.Field)
	if s.Operand.Field.Kind() == search.String {
		key = b.text(key)
	}
	return key, dir, cmp
}

// order writes the ORDER BY list: the sort, then creation time and pk in
// the same direction.
func (b *sqlBuilder) order(s *search.Sort, part int) {
	key, dir, _ := b.sortKey(s)
	switch {
	case part == partValues:
		b.w(b.text("sp.value"), dir, ", ")
	case key != "":
		b.w(key, dir, ", ")
	}
	b.w("g.created", dir, ", g.pk", dir)
}

// keyset writes the condition for "after the cursor" in the order of s.
func (b *sqlBuilder) keyset(s *search.Sort, c *searchCursor) {
	key, _, cmp := b.sortKey(s)
	tie := func() string {
		return "(g.created, g.pk) " + cmp + " (" + b.param(c.C) + ", " + b.param(c.P) + ")"
	}
	switch {
	case key == "" && (s == nil || s.Operand.Field != search.Property || c.S == nil):
		b.w(tie())
	case key == "":
		v := b.text("sp.value")
		b.w("(", v, " ", cmp, " ", b.param(*c.S), " OR (", v, " = ", b.param(*c.S), " AND ", tie(), "))")
	default:
		b.w("(", key, ", g.created, g.pk) ", cmp, " (", b.cursorValue(s, c), ", ", b.param(c.C), ", ", b.param(c.P), ")")
	}
}

// cursorValue binds the cursor's sort value as the sort expression's type.
func (b *sqlBuilder) cursorValue(s *search.Sort, c *searchCursor) string {
	switch {
	case c.S != nil:
		return b.param(*c.S)
	case s.Operand.Field == search.HasAvailablePlayerSessions:
		return b.boolParam(c.N != nil && *c.N == 1)
	case c.N != nil:
		return b.param(*c.N)
	}
	return b.param(int64(0))
}
