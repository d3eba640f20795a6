package live

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/anylift/anylift/internal/search"
)

// Ordered indexes: the fleet's ACTIVE sessions in the order of a sort
// key, so that a search sorted by it walks them in that order and stops
// after a page, and a range condition on it walks only the sessions in
// range.
//
//   - A property key's order is its values' sets (fleet.props), each in
//     creation order, read in value order: a sorted list of the sets
//     (values), one pointer per distinct value, no more per session. The
//     sessions lacking the key come last, in creation order, as the
//     store orders them.
//   - Any other key (gameSessionId, gameSessionName, maximumSessions,
//     playerSessionCount, hasAvailablePlayerSessions) has an ordered list
//     of the sessions by (key, creation time, row key): one pointer per
//     ACTIVE session. creationTimeMillis is every set's own order.
//
// An index is built the first time a search of its fleet needs it, under
// the read lock (fleet.ixMu keeps two readers from building it at once;
// no writer runs meanwhile), and kept up to date by every change after,
// under the write lock. A fleet never searched in an order pays nothing
// for it.

// minPos and maxPos are before and after every session's position.
var (
	minPos = pos{math.MinInt64, math.MinInt64}
	maxPos = pos{math.MaxInt64, math.MaxInt64}
)

// ordered is the fleet's ACTIVE sessions in the order of one field
// (ascending keyOf order): sorted chunks of at most maxChunk entries, as
// a set is.
type ordered struct {
	op     search.Operand
	chunks [][]*entry
	n      int
}

// key is e's key in o's order.
func (o *ordered) key(e *entry) sortKey { return keyOf(o.op, e) }

// newOrdered returns the index of op over the sessions of all (the
// fleet's ACTIVE ones).
func newOrdered(op search.Operand, all *set) *ordered {
	o := &ordered{op: op}
	list := make([]*entry, 0, all.Len())
	all.ascend(nil, func(e *entry) bool { list = append(list, e); return true })
	keys := make([]sortKey, len(list))
	for i, e := range list {
		keys[i] = o.key(e)
	}
	idx := make([]int32, len(list))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return keys[a].compare(keys[b], false) })
	for start := 0; start < len(idx); start += maxChunk {
		c := make([]*entry, min(maxChunk, len(idx)-start))
		for i := range c {
			c[i] = list[idx[start+i]]
		}
		o.chunks = append(o.chunks, c)
	}
	o.n = len(list)
	return o
}

// seek returns the place of the first entry whose key is after k
// (chunk, index in chunk); (len(chunks), 0) when none is.
func (o *ordered) seek(k sortKey) (int, int) {
	i := sort.Search(len(o.chunks), func(i int) bool {
		c := o.chunks[i]
		return o.key(c[len(c)-1]).compare(k, false) > 0
	})
	if i == len(o.chunks) {
		return i, 0
	}
	c := o.chunks[i]
	return i, sort.Search(len(c), func(j int) bool { return o.key(c[j]).compare(k, false) > 0 })
}

// rank returns the number of entries whose key is not after k (all when
// k is nil).
func (o *ordered) rank(k *sortKey) int {
	if k == nil {
		return o.n
	}
	i, j := o.seek(*k)
	n := j
	for _, c := range o.chunks[:i] {
		n += len(c)
	}
	return n
}

// count returns the number of entries between the bounds.
func (o *ordered) count(b bounds) int {
	lo := 0
	if b.lo != nil {
		lo = o.rank(b.lo)
	}
	return max(0, o.rank(b.hi)-lo)
}

// insert adds e, which must not be in o.
func (o *ordered) insert(e *entry) {
	o.n++
	if len(o.chunks) == 0 {
		o.chunks = append(o.chunks, []*entry{e})
		return
	}
	k := o.key(e)
	i, j := o.seek(k)
	if i == len(o.chunks) {
		i = len(o.chunks) - 1
		j = len(o.chunks[i])
	}
	c := append(o.chunks[i], nil)
	copy(c[j+1:], c[j:])
	c[j] = e
	if len(c) <= maxChunk {
		o.chunks[i] = c
		return
	}
	half := len(c) / 2
	left := append(make([]*entry, 0, maxChunk), c[:half]...)
	right := append(make([]*entry, 0, maxChunk), c[half:]...)
	o.chunks[i] = left
	o.chunks = slices.Insert(o.chunks, i+1, right)
}

// remove takes e out of o; its key must be the one it was inserted with.
func (o *ordered) remove(e *entry) {
	k := o.key(e)
	// The first entry not before e: seek past the one just before it.
	i := sort.Search(len(o.chunks), func(i int) bool {
		c := o.chunks[i]
		return o.key(c[len(c)-1]).compare(k, false) >= 0
	})
	if i == len(o.chunks) {
		return
	}
	c := o.chunks[i]
	j := sort.Search(len(c), func(j int) bool { return o.key(c[j]).compare(k, false) >= 0 })
	if j == len(c) || c[j] != e {
		return
	}
	o.n--
	copy(c[j:], c[j+1:])
	c[len(c)-1] = nil
	c = c[:len(c)-1]
	if len(c) > 0 {
		o.chunks[i] = c
		return
	}
	o.chunks = slices.Delete(o.chunks, i, i+1)
}

// ascend calls fn on the entries strictly between the bounds in order,
// until fn returns false.
func (o *ordered) ascend(b bounds, fn func(*entry) bool) {
	i, j := 0, 0
	if b.lo != nil {
		i, j = o.seek(*b.lo)
	}
	for ; i < len(o.chunks); i, j = i+1, 0 {
		for _, e := range o.chunks[i][j:] {
			if b.hi != nil && o.key(e).compare(*b.hi, false) >= 0 {
				return
			}
			if !fn(e) {
				return
			}
		}
	}
}

// descend calls fn on the entries strictly between the bounds in
// reverse order, until fn returns false.
func (o *ordered) descend(b bounds, fn func(*entry) bool) {
	i, j := len(o.chunks)-1, -1
	if b.hi != nil {
		// The last entry before hi: in the chunk before the first that
		// starts at or after hi.
		i = sort.Search(len(o.chunks), func(i int) bool { return o.key(o.chunks[i][0]).compare(*b.hi, false) >= 0 }) - 1
		if i >= 0 {
			c := o.chunks[i]
			j = sort.Search(len(c), func(j int) bool { return o.key(c[j]).compare(*b.hi, false) >= 0 }) - 1
		}
	}
	for ; i >= 0; i, j = i-1, -1 {
		c := o.chunks[i]
		if j < 0 {
			j = len(c) - 1
		}
		for ; j >= 0; j-- {
			if b.lo != nil && o.key(c[j]).compare(*b.lo, false) <= 0 {
				return
			}
			if !fn(c[j]) {
				return
			}
		}
	}
}

// values is a property key's value sets in value order (byte order, as
// the store compares them).
type values struct {
	sets []*set
}

// newValues returns the sorted list of a key's value sets.
func newValues(vals map[string]*set) *values {
	v := &values{sets: make([]*set, 0, len(vals))}
	for _, s := range vals {
		v.sets = append(v.sets, s)
	}
	slices.SortFunc(v.sets, func(a, b *set) int { return strings.Compare(a.val, b.val) })
	return v
}

// find returns the index of the first set whose value is not before val.
func (v *values) find(val string) int {
	return sort.Search(len(v.sets), func(i int) bool { return v.sets[i].val >= val })
}

// add puts a new value's set in its place.
func (v *values) add(s *set) { v.sets = slices.Insert(v.sets, v.find(s.val), s) }

// drop takes out the set of a value no session has any more.
func (v *values) drop(s *set) {
	if i := v.find(s.val); i < len(v.sets) && v.sets[i] == s {
		v.sets = slices.Delete(v.sets, i, i+1)
	}
}

// span returns the indexes [i, j) of the sets whose values lie within
// the bounds (keys of the property's order: group 0, value, position).
func (v *values) span(b bounds) (int, int) {
	i, j := 0, len(v.sets)
	if b.lo != nil {
		// Sets after lo: the value after lo's, or lo's own when lo is
		// before its sessions' positions.
		i = v.find(b.lo.str)
		if i < len(v.sets) && v.sets[i].val == b.lo.str && b.lo.pos == maxPos {
			i++
		}
	}
	if b.hi != nil {
		j = v.find(b.hi.str)
		if j < len(v.sets) && v.sets[j].val == b.hi.str && b.hi.pos == maxPos {
			j++
		}
	}
	return i, max(i, j)
}

// count returns the number of sessions whose value lies within the
// bounds.
func (v *values) count(b bounds) int {
	i, j := v.span(b)
	n := 0
	for _, s := range v.sets[i:j] {
		n += s.Len()
	}
	return n
}

// orderedBy returns the fleet's ordered index of field f, building it
// when none is kept yet. The caller holds the read lock at least.
func (f *fleet) orderedBy(field search.Field) *ordered {
	f.ixMu.Lock()
	defer f.ixMu.Unlock()
	o := f.orders[field]
	if o == nil {
		o = newOrdered(search.Operand{Field: field}, &f.active)
		if f.orders == nil {
			f.orders = map[search.Field]*ordered{}
		}
		f.orders[field] = o
	}
	return o
}

// valuesOf returns the sorted value sets of property key (nil when no
// ACTIVE session has it), building the list when none is kept yet. The
// caller holds the read lock at least.
func (f *fleet) valuesOf(key string) *values {
	vals := f.props[key]
	if vals == nil {
		return nil
	}
	f.ixMu.Lock()
	defer f.ixMu.Unlock()
	v := f.sortedVals[key]
	if v == nil {
		v = newValues(vals)
		if f.sortedVals == nil {
			f.sortedVals = map[string]*values{}
		}
		f.sortedVals[key] = v
	}
	return v
}
