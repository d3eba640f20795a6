package live

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"sync/atomic"

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
	filter := f.compile(q.Filter)
	match := func(e *entry) bool {
		return (q.Location == "" || e.s.Location == q.Location) && filter(e)
	}
	page := f.find(q, after, n+1, match)
	if len(page) > n {
		c := cursorAt(q.Sort, page[n-1])
		c.Q = fp
		next = c.Token()
	}
	return page[:min(len(page), n)], next, true, nil
}

// Plans a test may force (forcePlan): the walk in the sort's order
// wherever there is one, or the bounded heap over the smallest source
// of candidates, a range's included.
const (
	planChoose = iota
	planWalk
	planHeap
)

var forcePlan atomic.Int32

// heapWeight is what testing a candidate and keeping it in the heap
// costs, in visits of a walk (BenchmarkSearch: range-max, about 90 ns
// against 20).
const heapWeight = 4

// find returns up to max sessions that match q, in its order, after the
// cursor. It chooses between two plans by their estimated visits:
//
//   - walk an index in the sort's order (a creation-order set for
//     creation order, an ordered index otherwise), from the cursor and
//     within any range the filter puts on the sort key, stopping after
//     max matches: about max × walked / candidates visits, when the
//     matches are spread evenly over the walk;
//   - or test every candidate of the smallest source (the driver set,
//     within the filter's creation-time range; or the sessions in a
//     range of a seat count) and keep the first
//     max in a bounded heap: as many visits as candidates, each worth
//     heapWeight visits of a walk.
func (f *fleet) find(q store.SearchQuery, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	srt := search.Sort{} // creation order
	if q.Sort != nil {
		srt = *q.Sort
	}
	conds := conjuncts(q.Filter, nil)
	from := f.driver(q, conds)
	cb := posBounds(fieldBounds(conds, search.Operand{Field: search.CreationTimeMillis}))
	fromN := from.count(cb)
	alt, altN := f.rangeSource(conds)
	best := fromN
	if alt != nil {
		best = min(best, altN)
	}
	mode := forcePlan.Load()
	// visits estimates a walk over n sessions that stops after max matches.
	visits := func(n int) int { return min(n, max*n/cmp.Or(best, 1)) }
	heapSource := func() func(func(*entry) bool) {
		if alt != nil && (mode == planHeap || altN < fromN) {
			return alt
		}
		return func(fn func(*entry) bool) { from.ascendIn(cb, fn) }
	}
	if srt.Operand.Field == 0 || srt.Operand.Field == search.CreationTimeMillis {
		if alt != nil && (mode == planHeap || mode == planChoose && heapWeight*altN < visits(fromN)) {
			return top(alt, srt, after, max, match)
		}
		return creationOrder(from, cb, srt.Desc, after, max, match)
	}
	walk := f.walker(srt, conds)
	if mode == planWalk || mode == planChoose && best > 0 && visits(walk.span(from)) < heapWeight*best {
		return walk.run(from, cb, after, max, match)
	}
	return top(heapSource(), srt, after, max, match)
}

// driver returns the smallest of the fleet's indexes that holds every
// session matching q, whose filter is an AND of conds (and more).
func (f *fleet) driver(q store.SearchQuery, conds []*search.Cond) *set {
	best := &f.active
	if q.Location != "" {
		best = f.locations[q.Location] // nil: none there
	}
	for _, c := range conds {
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

// rangeSource returns the smallest range, among those the filter's
// conds bound, of a seat count (maximumSessions, playerSessionCount), as
// a walk over its sessions (in the ordered index of the count) and their
// number; nil when the filter bounds none. (The grammar admits only =
// and <> on property values: a property's sessions are a value's set.)
func (f *fleet) rangeSource(conds []*search.Cond) (src func(func(*entry) bool), n int) {
	for i, c := range conds {
		if c.Operand.Field != search.MaximumSessions && c.Operand.Field != search.PlayerSessionCount || c.Op == search.Ne {
			continue
		}
		if slices.ContainsFunc(conds[:i], func(d *search.Cond) bool { return d.Operand == c.Operand && d.Op != search.Ne }) {
			continue // bounded already
		}
		b := fieldBounds(conds, c.Operand)
		o := f.orderedBy(c.Operand.Field)
		if k := o.count(b); src == nil || k < n {
			src, n = func(fn func(*entry) bool) { o.ascend(b, fn) }, k
		}
	}
	return src, n
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

// bounds are the keys, in an ordered index's order, that a walk stays
// strictly between; nil: unbounded.
type bounds struct{ lo, hi *sortKey }

// fieldBounds returns the range that the conditions in conds on op (=,
// <, <=, >, >=) leave: every match of their AND lies strictly between.
func fieldBounds(conds []*search.Cond, op search.Operand) bounds {
	var b bounds
	if op.Field == search.HasAvailablePlayerSessions {
		return b
	}
	tighten := func(lo, hi *sortKey) {
		if lo != nil && (b.lo == nil || lo.compare(*b.lo, false) > 0) {
			b.lo = lo
		}
		if hi != nil && (b.hi == nil || hi.compare(*b.hi, false) < 0) {
			b.hi = hi
		}
	}
	for _, c := range conds {
		if c.Operand != op {
			continue
		}
		before := &sortKey{str: c.Str, num: c.Num, pos: minPos} // before the value's sessions
		after := &sortKey{str: c.Str, num: c.Num, pos: maxPos}  // after them
		switch c.Op {
		case search.Eq:
			tighten(before, after)
		case search.Lt:
			tighten(nil, before)
		case search.Le:
			tighten(nil, after)
		case search.Gt:
			tighten(after, nil)
		case search.Ge:
			tighten(before, nil)
		}
	}
	return b
}

// posBounds returns creation-time bounds as positions in creation order.
func posBounds(b bounds) posRange {
	var r posRange
	if b.lo != nil {
		r.lo = &pos{b.lo.num, b.lo.pos.pk}
	}
	if b.hi != nil {
		r.hi = &pos{b.hi.num, b.hi.pos.pk}
	}
	return r
}

// creationOrder returns up to max sessions of from within r that match,
// in creation order (newest first when desc), after the cursor.
func creationOrder(from *set, r posRange, desc bool, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	if after != nil {
		at := &pos{after.C, after.P}
		if !desc && (r.lo == nil || r.lo.less(*at)) {
			r.lo = at
		}
		if desc && (r.hi == nil || at.less(*r.hi)) {
			r.hi = at
		}
	}
	out := make([]*entry, 0, min(max, 64))
	visit := func(e *entry) bool {
		if match(e) {
			out = append(out, e)
		}
		return len(out) < max
	}
	if desc {
		from.descendIn(r, visit)
	} else {
		from.ascendIn(r, visit)
	}
	if len(out) == 0 {
		return nil // no match: no page, as the store answers
	}
	return out
}

// walker walks the fleet's ACTIVE sessions in the order of a sort other
// than creation order: a property's value sets, or an ordered index.
type walker struct {
	f     *fleet
	srt   search.Sort
	b     bounds // the filter's range on the sort key
	needs bool   // the filter requires the sorted property
}

func (f *fleet) walker(srt search.Sort, conds []*search.Cond) walker {
	w := walker{f: f, srt: srt, b: fieldBounds(conds, srt.Operand)}
	w.needs = slices.ContainsFunc(conds, func(c *search.Cond) bool { return c.Operand == srt.Operand })
	return w
}

// span estimates the sessions the walk may visit: those in range, and
// those of from lacking the sorted property unless the filter requires
// it. It builds no index.
func (w walker) span(from *set) int {
	if w.srt.Operand.Field != search.Property {
		w.f.ixMu.Lock()
		o := w.f.orders[w.srt.Operand.Field]
		w.f.ixMu.Unlock()
		if o == nil {
			return w.f.active.Len()
		}
		return o.count(w.b)
	}
	n := 0
	if v := w.f.valuesOf(w.srt.Operand.Key); v != nil {
		n = v.count(w.b)
	}
	if !w.needs {
		n += from.Len()
	}
	return n
}

// run returns up to max sessions that match, in the sort's order, after
// the cursor; from (within r) holds every match.
func (w walker) run(from *set, r posRange, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	var at *sortKey
	if after != nil {
		k := cursorKey(&w.srt, after)
		at = &k
	}
	out := make([]*entry, 0, min(max, 64))
	visit := func(e *entry) bool {
		if match(e) {
			out = append(out, e)
		}
		return len(out) < max
	}
	if w.srt.Operand.Field == search.Property {
		w.properties(from, r, at, visit)
	} else {
		b := w.b
		o := w.f.orderedBy(w.srt.Operand.Field)
		if at != nil && !w.srt.Desc && (b.lo == nil || at.compare(*b.lo, false) > 0) {
			b.lo = at
		}
		if at != nil && w.srt.Desc && (b.hi == nil || at.compare(*b.hi, false) < 0) {
			b.hi = at
		}
		if w.srt.Desc {
			o.descend(b, visit)
		} else {
			o.ascend(b, visit)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// properties walks, in the order of a property sort from the cursor at,
// the sessions with a value in range, value by value and each value's in
// creation order, then (unless the filter requires the property) those
// of from lacking it, in creation order: last in either direction, as
// the store orders them.
func (w walker) properties(from *set, r posRange, at *sortKey, visit func(*entry) bool) {
	key, desc := w.srt.Operand.Key, w.srt.Desc
	inNulls := at != nil && at.group == 1
	more := true
	if v := w.f.valuesOf(key); v != nil && !inNulls {
		i, j := v.span(w.b)
		if at != nil {
			k := v.find(at.str)
			if desc {
				if k < len(v.sets) && v.sets[k].val == at.str {
					k++
				}
				j = min(j, k)
			} else {
				i = max(i, k)
			}
		}
		j = max(i, j)
		for n := range j - i {
			s := v.sets[i+n]
			if desc {
				s = v.sets[j-1-n]
			}
			var p *pos
			if at != nil && s.val == at.str {
				p = &at.pos
			}
			if desc {
				s.descend(p, func(e *entry) bool { more = visit(e); return more })
			} else {
				s.ascend(p, func(e *entry) bool { more = visit(e); return more })
			}
			if !more {
				return
			}
		}
	}
	if w.needs {
		return
	}
	if inNulls {
		if desc {
			r.hi = &at.pos
		} else {
			r.lo = &at.pos
		}
	}
	lacks := func(e *entry) bool { return e.prop(key) != nil || visit(e) }
	if desc {
		from.descendIn(r, lacks)
	} else {
		from.ascendIn(r, lacks)
	}
}

// top returns up to max sessions of src that match, in the order of
// srt, after the cursor. It keeps the max first in a bounded heap rather
// than sorting every match.
func top(src func(func(*entry) bool), srt search.Sort, after *store.SearchCursor, max int, match func(*entry) bool) []*entry {
	var at *sortKey
	if after != nil {
		k := cursorKey(&srt, after)
		at = &k
	}
	h := &topK{desc: srt.Desc}
	src(func(e *entry) bool {
		if !match(e) {
			return true
		}
		k := keyOf(srt.Operand, e)
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
	if len(h.items) == 0 {
		return nil
	}
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

// keyOf returns e's key in the order of op (creation order when op is
// none).
func keyOf(op search.Operand, e *entry) sortKey {
	k := sortKey{pos: e.pos}
	switch op.Field {
	case search.GameSessionID:
		k.str = e.s.ID
	case search.GameSessionName:
		k.str = e.s.Name
	case search.Property:
		if vs := e.prop(op.Key); vs != nil {
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
	k := keyOf(srt.Operand, e)
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
