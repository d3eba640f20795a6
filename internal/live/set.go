package live

import "sort"

// pos is a session's place in creation order: creation time (epoch ms),
// then row key. Every session order ends with it, and every set is kept
// in it.
type pos struct {
	created, pk int64
}

func (a pos) less(b pos) bool {
	return a.created < b.created || a.created == b.created && a.pk < b.pk
}

// maxChunk bounds a chunk of a set: inserting or removing moves at most
// this many pointers within a chunk, plus one pointer per chunk when a
// chunk splits or empties.
const maxChunk = 256

// set is an ordered set of sessions in creation order: sorted chunks of
// at most maxChunk entries, so that inserting and removing anywhere cost
// O(√n) at worst instead of moving the whole set, while walking it in
// either direction from any position stays a slice walk.
type set struct {
	chunks [][]*entry
	n      int
	val    string // of a property value's set: the value
}

// Len is the number of sessions in s.
func (s *set) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// chunkFor returns the index of the first chunk whose last entry is not
// before p (len(chunks) when every entry is before p).
func (s *set) chunkFor(p pos) int {
	return sort.Search(len(s.chunks), func(i int) bool {
		c := s.chunks[i]
		return !c[len(c)-1].pos.less(p)
	})
}

// insert adds e, which must not be in s.
func (s *set) insert(e *entry) {
	s.n++
	if len(s.chunks) == 0 {
		s.chunks = append(s.chunks, []*entry{e})
		return
	}
	i := s.chunkFor(e.pos)
	if i == len(s.chunks) {
		i-- // after every entry: the last chunk
	}
	c := s.chunks[i]
	j := sort.Search(len(c), func(k int) bool { return !c[k].pos.less(e.pos) })
	c = append(c, nil)
	copy(c[j+1:], c[j:])
	c[j] = e
	if len(c) <= maxChunk {
		s.chunks[i] = c
		return
	}
	half := len(c) / 2
	left := append(make([]*entry, 0, maxChunk), c[:half]...)
	right := append(make([]*entry, 0, maxChunk), c[half:]...)
	s.chunks[i] = left
	s.chunks = append(s.chunks, nil)
	copy(s.chunks[i+2:], s.chunks[i+1:])
	s.chunks[i+1] = right
}

// remove takes e out of s; nothing happens when e is not in s.
func (s *set) remove(e *entry) {
	i := s.chunkFor(e.pos)
	if i == len(s.chunks) {
		return
	}
	c := s.chunks[i]
	j := sort.Search(len(c), func(k int) bool { return !c[k].pos.less(e.pos) })
	if j == len(c) || c[j] != e {
		return
	}
	s.n--
	copy(c[j:], c[j+1:])
	c[len(c)-1] = nil
	c = c[:len(c)-1]
	if len(c) > 0 {
		s.chunks[i] = c
		return
	}
	copy(s.chunks[i:], s.chunks[i+1:])
	s.chunks[len(s.chunks)-1] = nil
	s.chunks = s.chunks[:len(s.chunks)-1]
}

// ascend calls fn on the sessions after p (all when p is nil) in
// creation order, until fn returns false.
func (s *set) ascend(after *pos, fn func(*entry) bool) {
	if s == nil {
		return
	}
	i, j := 0, 0
	if after != nil {
		// First entry strictly after *after.
		i = sort.Search(len(s.chunks), func(k int) bool {
			c := s.chunks[k]
			return after.less(c[len(c)-1].pos)
		})
		if i < len(s.chunks) {
			c := s.chunks[i]
			j = sort.Search(len(c), func(k int) bool { return after.less(c[k].pos) })
		}
	}
	for ; i < len(s.chunks); i, j = i+1, 0 {
		for _, e := range s.chunks[i][j:] {
			if !fn(e) {
				return
			}
		}
	}
}

// descend calls fn on the sessions before p (all when p is nil) in
// reverse creation order, until fn returns false.
func (s *set) descend(before *pos, fn func(*entry) bool) {
	if s == nil {
		return
	}
	i := len(s.chunks) - 1
	j := -1 // the index of the first entry to visit in chunk i; -1: its last
	if before != nil {
		// Last entry strictly before *before.
		i = sort.Search(len(s.chunks), func(k int) bool { return !s.chunks[k][0].pos.less(*before) }) - 1
		if i >= 0 {
			c := s.chunks[i]
			j = sort.Search(len(c), func(k int) bool { return !c[k].pos.less(*before) }) - 1
		}
	}
	for ; i >= 0; i, j = i-1, -1 {
		c := s.chunks[i]
		if j < 0 {
			j = len(c) - 1
		}
		for ; j >= 0; j-- {
			if !fn(c[j]) {
				return
			}
		}
	}
}

// posRange is a range of creation order, the positions strictly between
// lo and hi; nil: unbounded.
type posRange struct{ lo, hi *pos }

// rank returns the number of entries before p (all when p is nil).
func (s *set) rank(p *pos) int {
	if s == nil {
		return 0
	}
	if p == nil {
		return s.n
	}
	i := s.chunkFor(*p)
	n := 0
	for _, c := range s.chunks[:i] {
		n += len(c)
	}
	if i < len(s.chunks) {
		c := s.chunks[i]
		n += sort.Search(len(c), func(k int) bool { return !c[k].pos.less(*p) })
	}
	return n
}

// count returns the number of entries within r (up to one more when a
// bound is an entry's own position).
func (s *set) count(r posRange) int {
	lo := 0
	if r.lo != nil {
		lo = s.rank(r.lo)
	}
	return max(0, s.rank(r.hi)-lo)
}

// ascendIn calls fn on the sessions within r in creation order, until
// fn returns false.
func (s *set) ascendIn(r posRange, fn func(*entry) bool) {
	if r.hi == nil {
		s.ascend(r.lo, fn)
		return
	}
	s.ascend(r.lo, func(e *entry) bool { return e.pos.less(*r.hi) && fn(e) })
}

// descendIn calls fn on the sessions within r in reverse creation order,
// until fn returns false.
func (s *set) descendIn(r posRange, fn func(*entry) bool) {
	if r.lo == nil {
		s.descend(r.hi, fn)
		return
	}
	s.descend(r.hi, func(e *entry) bool { return r.lo.less(e.pos) && fn(e) })
}
