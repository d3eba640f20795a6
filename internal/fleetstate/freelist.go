package fleetstate

import "sort"

// freeList is a location's free processes in claim order (entry.before).
// New processes are mostly the newest, so inserts are mostly appends;
// claims take from the front.
type freeList struct {
	list []*entry
}

// search answers where e is, or would be inserted.
func (l *freeList) search(e *entry) int {
	n := len(l.list)
	if n == 0 || l.list[n-1].before(e) {
		return n
	}
	return sort.Search(n, func(i int) bool { return !l.list[i].before(e) })
}

// insert adds e, which the list does not hold.
func (l *freeList) insert(e *entry) {
	i := l.search(e)
	l.list = append(l.list, nil)
	copy(l.list[i+1:], l.list[i:])
	l.list[i] = e
}

// remove drops the entry of e's process, if the list holds it.
func (l *freeList) remove(e *entry) {
	i := l.search(e)
	if i < len(l.list) && l.list[i].p.PID == e.p.PID && l.list[i].p.ComputeName == e.p.ComputeName {
		l.removeAt(i)
	}
}

// removeAt drops and answers the i-th entry.
func (l *freeList) removeAt(i int) *entry {
	e := l.list[i]
	copy(l.list[i:], l.list[i+1:])
	l.list[len(l.list)-1] = nil
	l.list = l.list[:len(l.list)-1]
	return e
}

// first answers the index of the first entry ok accepts, or -1.
func (l *freeList) first(ok func(*entry) bool) int {
	for i, e := range l.list {
		if ok(e) {
			return i
		}
	}
	return -1
}
