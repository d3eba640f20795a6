package store

// Horizon says when the write transactions begun before a moment have all
// reached the commit hook (sqldb.DB): Mark names the moment, and every
// transaction begun before Mark returned m has ended (its changes handed
// to the hook, or failed) once Settled returns m or more.
type Horizon interface {
	Mark() uint64
	Settled() uint64
}

// Versions remembers, for a memory fed by a store whose commits may reach
// it out of order (PostgreSQL, Change.Version), the version of rows it
// does not hold: rows that ended, which an older write reaching it late
// must not bring back, and changes that reach it before the row they
// change. A record is needed only until every write transaction that may
// bring an older change of its row has reached the hook: each is kept
// until the transactions begun before it was recorded have all ended
// (Horizon), then dropped at the next Prune. Without a horizon (commits
// in order, SQLite) Versions keeps nothing.
type Versions[K comparable, V any] struct {
	h Horizon
	m map[K]versioned[V]
	q []queued[K]
}

type versioned[V any] struct {
	version int64
	val     V
	mark    uint64
}

type queued[K comparable] struct {
	key  K
	mark uint64
}

// SetHorizon makes v keep records, until h says they are no longer
// needed. Call it before v is used.
func (v *Versions[K, V]) SetHorizon(h Horizon) { v.h = h }

// Keeps reports whether v keeps records (it has a horizon).
func (v *Versions[K, V]) Keeps() bool { return v.h != nil }

// Put records that row k is at version, with val, unless v holds a newer
// record of it.
func (v *Versions[K, V]) Put(k K, version int64, val V) {
	if v.h == nil {
		return
	}
	if old, ok := v.m[k]; ok && old.version > version {
		return
	}
	if v.m == nil {
		v.m = map[K]versioned[V]{}
	}
	mark := v.h.Mark()
	v.m[k] = versioned[V]{version, val, mark}
	v.q = append(v.q, queued[K]{k, mark})
}

// Get returns the record of row k.
func (v *Versions[K, V]) Get(k K) (version int64, val V, ok bool) {
	r, ok := v.m[k]
	return r.version, r.val, ok
}

// Delete forgets row k.
func (v *Versions[K, V]) Delete(k K) { delete(v.m, k) }

// Len is the number of rows remembered.
func (v *Versions[K, V]) Len() int { return len(v.m) }

// Prune drops the records no transaction in flight can need.
func (v *Versions[K, V]) Prune() {
	if len(v.q) == 0 {
		return
	}
	settled := v.h.Settled()
	n := 0
	for n < len(v.q) && v.q[n].mark <= settled {
		if r, ok := v.m[v.q[n].key]; ok && r.mark == v.q[n].mark {
			delete(v.m, v.q[n].key)
		}
		n++
	}
	v.q = v.q[n:]
	if len(v.q) == 0 {
		v.q = nil
	}
}
