package sqldb

import "sync"

// decodedDocs keeps records decoded beside the document each was decoded
// from (or written as), by key: a read whose document is that same text
// takes a copy of the record kept instead of decoding it again. The
// document read decides, so a record written by anyone else (another
// node, a job that failed) is decoded as before: this saves the decoding
// only and is never a decision's authority. Each reader gets a copy of
// its own (clone), so a caller that changes what it read changes nothing
// kept. Placements, queues and computes are kept so
// (placementdocs.go, keptcomputes.go).
type decodedDocs[T any] struct {
	clone func(*T) *T // a deep copy
	max   int         // past it, the memory starts again empty

	mu sync.Mutex
	m  map[string]decodedDoc[T]
}

type decodedDoc[T any] struct {
	doc string
	v   *T // as decoding doc gives it; never handed out
}

func newDecodedDocs[T any](max int, clone func(*T) *T) decodedDocs[T] {
	return decodedDocs[T]{clone: clone, max: max}
}

// get returns a copy of the record kept under key when it was decoded
// from doc, or nil.
func (k *decodedDocs[T]) get(key, doc string) *T {
	k.mu.Lock()
	e, ok := k.m[key]
	k.mu.Unlock()
	if !ok || e.doc != doc {
		return nil
	}
	return k.clone(e.v)
}

// latest returns the document kept under key and a copy of its record,
// or "", nil.
func (k *decodedDocs[T]) latest(key string) (string, *T) {
	k.mu.Lock()
	e, ok := k.m[key]
	k.mu.Unlock()
	if !ok {
		return "", nil
	}
	return e.doc, k.clone(e.v)
}

// put keeps a copy of v, decoded from doc, under key.
func (k *decodedDocs[T]) put(key, doc string, v *T) { k.keep(key, doc, k.clone(v)) }

// keep keeps v itself, which the caller gives up, as decoding doc gives
// it.
func (k *decodedDocs[T]) keep(key, doc string, v *T) {
	k.mu.Lock()
	if k.m == nil || len(k.m) >= k.max {
		k.m = map[string]decodedDoc[T]{}
	}
	k.m[key] = decodedDoc[T]{doc: doc, v: v}
	k.mu.Unlock()
}

// drop forgets what is kept under key.
func (k *decodedDocs[T]) drop(key string) {
	k.mu.Lock()
	delete(k.m, key)
	k.mu.Unlock()
}
