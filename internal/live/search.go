package live

import (
	"cmp"
	"container/heap"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// Search answers SearchGameSessions for q as the store does
// (store.SearchTx): the same sessions, order, pages, tokens and errors.
// ok is false when memory cannot answer (the fleet is not one it knows
// to exist); then the store must.
//
// The search starts from the smallest index that holds every result:
// the fleet's ACTIVE sessions, those of q.Location, those with a free
// seat (when the filter requires one) or those with a property value
// (when the filter requires it), and tests the filter on each. In
// creation order it stops after a page; other orders sort the matches.
func (l *Sessions) Search(q store.SearchQuery, p store.Page) (list []*game.GameSession, next string, ok bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	page, next, ok, err := l.search(q, p)
	return records(page), next, ok, err
}

// search is Search, giving the entries of the page; the caller holds the
// read lock.
func (l *Sessions) search(q store.SearchQuery, p store.Page) (list []*entry, next string, ok bool, err error) {
	f := l.fleets[q.FleetID]
	if !f.answers() {
		return nil, "", false, nil
	}
	fp := q.Fingerprint()
	after, err := store.SearchAfter(q, p.Token, fp)
	if err != nil {
		return nil, "", true, err
	}
	n := store.PageLimit(p.Limit, 20, 0)
	from := f.driver(q)
	filter := f.compile(q.Filter)
	match := func(e *entry) bool {
		return (q.Location == "" || e.s.Location == q.Location) && filter(e)
	}
	var page []*entry
	if q.Sort == nil || q.Sort.Operand.Field == search.CreationTimeMillis {
		page = creationOrder(from, q.Sort != nil && q.Sort.Desc, after, n+1, match)
	} else {
		page = sorted(from, q.Sort, after, n+1, match)
	}
	if len(page) > n {
		c := cursorAt(q.Sort, page[n-1])
		c.Q = fp
		next = c.Token()
	}
	return page[:min(len(page), n)], next, true, nil
}

// driver returns the smallest of the fleet's indexes that holds every
// session matching q.
func (f *fleet) driver(q store.SearchQuery) *set {
	best := &f.active
	if q.Location != "" {
		best = f.locations[q.Location] // nil: none there
	}
	for _, c := range conjuncts(q.Filter, nil) {
		var s *set
		switch {
		case c.Operand.Field == search.Property && c.Op == search.Eq:
			s = f.props[c.Operand.Key][c.Str] // nil: no session has it
		case c.Operand.Field == search.HasAvailablePlayerSessions && c.Bool == (c.Op == search.Eq):
			s = &f.open
		default:
			continue
		}
		if s.Len() < best.Len() {
			best = s
		}
	}
	return best
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

// creationOrder returns up to max sessions of from that match, in
// creation order (newest first when desc), after the cursor.
func creationOrder(from *set, desc bool, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	var at *pos
	if after != nil {
		at = &pos{after.C, after.P}
	}
	out := make([]*entry, 0, min(max, 64))
	visit := func(e *entry) bool {
		if match(e) {
			out = append(out, e)
		}
		return len(out) < max
	}
	if desc {
		from.descend(at, visit)
	} else {
		from.ascend(at, visit)
	}
	if len(out) == 0 {
		return nil // no match: no page, as the store answers
	}
	return out
}

// sorted returns up to max sessions of from that match, in the order of
// srt, after the cursor. It keeps the max first in a bounded heap rather
// than sorting every match.
func sorted(from *set, srt *search.Sort, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	var at *sortKey
	if after != nil {
		k := cursorKey(srt, after)
		at = &k
	}
	h := &topK{desc: srt.Desc}
	from.ascend(nil, func(e *entry) bool {
		if !match(e) {
			return true
		}
		k := keyOf(srt, e)
		if at != nil && k.compare(*at, srt.Desc) <= 0 {
			return true
		}
		if len(h.items) < max {
			heap.Push(h, ranked{k, e})
		} else if k.compare(h.items[0].key, srt.Desc) < 0 {
			h.items[0] = ranked{k, e}
			heap.Fix(h, 0)
		}
		return true
	})
	out := make([]*entry, len(h.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(ranked).e
	}
	return out
}

// ranked is a match with its key; topK is a heap of matches whose top is
// the last in the order, so the first max are kept by replacing it.
type ranked struct {
	key sortKey
	e   *entry
}

type topK struct {
	items []ranked
	desc  bool
}

func (h *topK) Len() int           { return len(h.items) }
func (h *topK) Less(i, j int) bool { return h.items[i].key.compare(h.items[j].key, h.desc) > 0 }
func (h *topK) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topK) Push(x any)         { h.items = append(h.items, x.(ranked)) }
func (h *topK) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// sortKey is a session's place in a sorted search: its group (0, or 1
// when it lacks the sorted property: those come last in either
// direction), its sort value and its creation position.
type sortKey struct {
	group int
	str   string
	num   int64
	pos   pos
}

// compare orders keys: group first, then value, creation time and row
// key, all three reversed when desc.
func (a sortKey) compare(b sortKey, desc bool) int {
	if c := cmp.Compare(a.group, b.group); c != 0 {
		return c
	}
	c := strings.Compare(a.str, b.str)
	if c == 0 {
		c = cmp.Compare(a.num, b.num)
	}
	if c == 0 {
		c = cmp.Compare(a.pos.created, b.pos.created)
	}
	if c == 0 {
		c = cmp.Compare(a.pos.pk, b.pos.pk)
	}
	if desc {
		return -c
	}
	return c
}

// keyOf returns e's key in the order of srt.
func keyOf(srt *search.Sort, e *entry) sortKey {
	k := sortKey{pos: e.pos}
	switch srt.Operand.Field {
	case search.GameSessionID:
		k.str = e.s.ID
	case search.GameSessionName:
		k.str = e.s.Name
	case search.Property:
		if vs := e.prop(srt.Operand.Key); vs != nil {
			k.str = vs.val
		} else {
			k.group = 1
		}
	case search.MaximumSessions:
		k.num = int64(e.s.MaximumPlayerSessionCount)
	case search.PlayerSessionCount:
		k.num = int64(e.s.CurrentPlayerSessionCount)
	case search.CreationTimeMillis:
		k.num = e.created
	case search.HasAvailablePlayerSessions:
		k.num = boolInt(e.open())
	}
	return k
}

// cursorKey returns the key a cursor stands for in the order of srt.
func cursorKey(srt *search.Sort, c *store.SearchCursor) sortKey {
	k := sortKey{pos: pos{c.C, c.P}}
	switch {
	case c.S != nil:
		k.str = *c.S
	case srt.Operand.Field == search.Property:
		k.group = 1
	case c.N != nil && srt.Operand.Field == search.HasAvailablePlayerSessions:
		k.num = boolInt(*c.N == 1) // as the store binds it
	case c.N != nil:
		k.num = *c.N
	}
	return k
}

// cursorAt returns the position of e in the order of srt, as a token
// holds it.
func cursorAt(srt *search.Sort, e *entry) store.SearchCursor {
	c := store.SearchCursor{C: e.created, P: e.pk}
	if srt == nil {
		return c
	}
	k := keyOf(srt, e)
	switch {
	case srt.Operand.Field == search.Property:
		if k.group == 0 {
			c.S = &k.str
		}
	case srt.Operand.Field.Kind() == search.String:
		c.S = &k.str
	default:
		c.N = &k.num
	}
	return c
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// compile returns the test of filter x (nil: every session) on the
// fleet's ACTIVE sessions, as the store's query tests it: a property
// condition holds only for sessions that have the property. A property
// value is looked up once, here: a session has it when it is in the
// value's set.
func (f *fleet) compile(x search.Expr) func(*entry) bool {
	switch x := x.(type) {
	case nil:
		return func(*entry) bool { return true }
	case *search.And:
		l, r := f.compile(x.L), f.compile(x.R)
		return func(e *entry) bool { return l(e) && r(e) }
	case *search.Or:
		l, r := f.compile(x.L), f.compile(x.R)
		return func(e *entry) bool { return l(e) || r(e) }
	case *search.Not:
		inner := f.compile(x.X)
		return func(e *entry) bool { return !inner(e) }
	case *search.Cond:
		return f.cond(x)
	}
	return func(*entry) bool { return false }
}

func (f *fleet) cond(c *search.Cond) func(*entry) bool {
	switch c.Operand.Field {
	case search.Property:
		key := c.Operand.Key
		target := f.props[key][c.Str] // nil: no ACTIVE session has the value
		switch c.Op {
		case search.Eq:
			return func(e *entry) bool { vs := e.prop(key); return vs != nil && vs == target }
		case search.Ne:
			return func(e *entry) bool { vs := e.prop(key); return vs != nil && vs != target }
		}
		return func(e *entry) bool {
			vs := e.prop(key)
			return vs != nil && compare(strings.Compare(vs.val, c.Str), c.Op)
		}
	case search.HasAvailablePlayerSessions:
		want := c.Bool == (c.Op == search.Eq)
		return func(e *entry) bool { return e.open() == want }
	case search.GameSessionID:
		return func(e *entry) bool { return compare(strings.Compare(e.s.ID, c.Str), c.Op) }
	case search.GameSessionName:
		return func(e *entry) bool { return compare(strings.Compare(e.s.Name, c.Str), c.Op) }
	case search.MaximumSessions:
		return func(e *entry) bool { return compare(cmp.Compare(int64(e.max), c.Num), c.Op) }
	case search.PlayerSessionCount:
		return func(e *entry) bool { return compare(cmp.Compare(int64(e.cur), c.Num), c.Op) }
	case search.CreationTimeMillis:
		return func(e *entry) bool { return compare(cmp.Compare(e.created, c.Num), c.Op) }
	}
	return func(*entry) bool { return false }
}

// compare applies a comparator to the result of a three-way comparison.
func compare(c int, op search.Comparator) bool {
	switch op {
	case search.Eq:
		return c == 0
	case search.Ne:
		return c != 0
	case search.Lt:
		return c < 0
	case search.Gt:
		return c > 0
	case search.Le:
		return c <= 0
	case search.Ge:
		return c >= 0
	}
	return false
}
