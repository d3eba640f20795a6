package sqldb

import (
	"strings"
	"sync"
)

// Within one grouped write transaction, the records that many jobs read
// and few change (fleets, queues, computes) are read from the database
// once: a batch of placements on one queue and fleet would otherwise read
// the same queue, fleet and computes again for every job, a round trip
// each. What a read locks (FOR SHARE on PostgreSQL) the transaction
// keeps until it ends. Any write of those tables, and any job undone to
// its savepoint (which drops the locks it took), forgets them all.
//
// On a store only this process opens (SQLite: KeepRecords), fleets and
// computes are also kept from one write transaction to the next: only
// the one writer connection changes them, so what a write transaction
// read stays true until a write transaction changes it. A transaction
// that writes either table empties that memory at once and fills it no
// more (its reads may see its own uncommitted writes); one that did not
// fills it with what it reads, which is committed. Reads in View do not
// use it: they run beside the writer, on snapshots of their own.

// recordDocs are the docs of fleets and computes kept between write
// transactions (KeepRecords), and computes kept decoded beside them.
type recordDocs struct {
	mu       sync.Mutex
	m        map[string]string
	computes map[string]keptCompute
}

// maxRecordDocs bounds recordDocs: past it, the memory starts again empty.
const maxRecordDocs = 4096

// KeepRecords keeps the records of fleets and computes that write
// transactions read, from one to the next (see above). Only for a store
// no other process or node writes; call it before the DB is shared.
func (db *DB) KeepRecords() {
	db.records = &recordDocs{m: map[string]string{}, computes: map[string]keptCompute{}}
}

// kept reports whether key (a fleet or a compute) may be kept between
// transactions by t.
func (t *Tx) kept(key string) bool {
	return t.db.records != nil && t.writable && !t.wroteRecords &&
		(strings.HasPrefix(key, "fleet\x00") || strings.HasPrefix(key, "compute\x00"))
}

// readDoc returns the doc column q selects, from this transaction's
// reads when it has read it under key before.
func (t *Tx) readDoc(key string, q string, args ...any) (string, error) {
	if doc, ok := t.docs[key]; ok {
		return doc, nil
	}
	kept := t.kept(key)
	if kept {
		r := t.db.records
		r.mu.Lock()
		doc, ok := r.m[key]
		r.mu.Unlock()
		if ok {
			if t.docs != nil {
				t.docs[key] = doc
			}
			return doc, nil
		}
	}
	var doc string
	if err := t.queryRow(q, args...).Scan(&doc); err != nil {
		return "", err
	}
	if t.docs != nil {
		t.docs[key] = doc
	}
	if kept {
		r := t.db.records
		r.mu.Lock()
		if len(r.m) >= maxRecordDocs {
			clear(r.m)
			clear(r.computes)
		}
		r.m[key] = doc
		r.mu.Unlock()
	}
	return doc, nil
}

// forgetDocs drops what readDoc kept in this transaction.
func (t *Tx) forgetDocs() {
	if len(t.docs) > 0 {
		clear(t.docs)
	}
}

// wroteDocs is forgetDocs for a write of a fleet, a compute or a queue:
// what was kept between transactions goes too, and this transaction
// keeps nothing more there.
func (t *Tx) wroteDocs() {
	t.forgetDocs()
	if r := t.db.records; r != nil {
		t.wroteRecords = true
		r.mu.Lock()
		clear(r.m)
		clear(r.computes)
		r.mu.Unlock()
	}
}
