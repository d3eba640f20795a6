package sqldb

import (
	"slices"

	"github.com/anylift/anylift/internal/game"
)

// Computes kept decoded (SQLite, KeepRecords; not on a node keeping the
// records of the fleets it owns, whose reads of them readDoc fences). A
// compute is read by CreateGameSession and by every activation (its
// address, its status), and decoding its JSON document was most of what
// that read cost the committer once the document itself was kept
// (docs.go). Beside a kept
// document, the compute it decodes to is kept too, under the same rules:
// only while the document is kept, emptied with it by any write of a
// fleet, compute or queue. Each reader gets a copy of its own
// (copyCompute), so a caller that changes what it read changes nothing
// kept.

// keptCompute is a decoded compute and the document it was decoded from.
type keptCompute struct {
	doc string
	c   *game.Compute
}

// keepsDecoded reports whether t may keep the compute under key decoded:
// on a store that keeps records for itself alone (KeepRecords), whose
// reads of them need no fence.
func (t *Tx) keepsDecoded(key string) bool {
	r := t.db.records
	if r == nil || r.owned {
		return false
	}
	ok, _ := t.keeps(r, key)
	return ok
}

// keptCompute returns a copy of the compute kept decoded under key, or nil.
func (t *Tx) keptCompute(key string) *game.Compute {
	if !t.keepsDecoded(key) {
		return nil
	}
	r := t.db.records
	r.mu.Lock()
	k, ok := r.computes[key]
	if ok && r.m[key] != k.doc {
		ok = false // not the document kept now
	}
	r.mu.Unlock()
	if !ok {
		return nil
	}
	if t.docs != nil {
		t.docs[key] = k.doc // as readDoc would have noted it
	}
	return copyCompute(k.c)
}

// keepCompute keeps c, decoded from doc, when doc is the document kept
// under key.
func (t *Tx) keepCompute(key, doc string, c *game.Compute) {
	if !t.keepsDecoded(key) {
		return
	}
	r := t.db.records
	r.mu.Lock()
	if kept, ok := r.m[key]; ok && kept == doc {
		r.computes[key] = keptCompute{doc: doc, c: copyCompute(c)}
	}
	r.mu.Unlock()
}

// copyCompute copies c and what it refers to. TestCopyComputeCoversItsFields
// fails when a field is added that this would share between copies.
func copyCompute(c *game.Compute) *game.Compute {
	cp := *c
	cp.Ports = slices.Clone(c.Ports)
	return &cp
}
