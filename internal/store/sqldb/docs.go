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
//
// On PostgreSQL, a node that owns fleets and commits its writes through
// one committer (KeepOwnedRecords) keeps the fleets and computes of the
// fleets it holds in memory (those the memory of processes answers for,
// SetLiveProcessesFor) in the same way, for the same reason: every write
// of a fleet or a compute is fenced (owners.go), so while the node holds
// the fleet only its committer changes them. A record is kept with the
// memory's generation, which ForgetRecords moves on whenever the node
// gains or loses a fleet (a new epoch, ownership coming into force or
// ceasing): what was read before that is not kept, and what was kept is
// dropped. A job answered from there notes that it read the fleet from
// memory and fences the fleet: its fence then fails it should the lease
// name another node, or this one at another epoch than it holds, as
// for sessions read from memory (memsessions.go).

// recordDocs are the docs of fleets and computes kept between write
// transactions (KeepRecords, KeepOwnedRecords), and on SQLite computes
// kept decoded beside them (keptcomputes.go).
type recordDocs struct {
	// owned: kept for the fleets held in memory only (KeepOwnedRecords).
	owned bool

	mu       sync.Mutex
	m        map[string]string
	computes map[string]keptCompute // KeepRecords only
	gen      uint64                 // moved on by ForgetRecords
}

// maxRecordDocs bounds recordDocs: past it, the memory starts again empty.
const maxRecordDocs = 4096

// KeepRecords keeps the records of fleets and computes that write
// transactions read, from one to the next (see above). Only for a store
// no other process or node writes; call it before the DB is shared.
func (db *DB) KeepRecords() {
	db.records = &recordDocs{m: map[string]string{}, computes: map[string]keptCompute{}}
}

// KeepOwnedRecords keeps the records of the fleets this node holds in
// memory, and of their computes, from one grouped write transaction to
// the next (see above). Only for a node with fleet ownership whose
// writes are grouped (EnableGroupCommit) and whose memory of processes
// answers for the fleets it holds (SetLiveProcessesFor); that memory must
// call ForgetRecords whenever it gains or loses a fleet. Call it before
// the DB is shared.
func (db *DB) KeepOwnedRecords() { db.records = &recordDocs{owned: true, m: map[string]string{}} }

// ForgetRecords drops the records kept (KeepOwnedRecords), and keeps
// none of those read before it.
func (db *DB) ForgetRecords() {
	db.placed.forget() // placed.go
	r := db.records
	if r == nil {
		return
	}
	r.mu.Lock()
	r.gen++
	clear(r.m)
	clear(r.computes)
	r.mu.Unlock()
}

// keeps reports whether key (a fleet or a compute) may be kept between
// transactions by t, and, for a node's owned fleets, the fleet's id.
func (t *Tx) keeps(r *recordDocs, key string) (ok bool, fleetID string) {
	if r == nil || !t.writable || t.wroteRecords {
		return false, ""
	}
	rest, fleet := strings.CutPrefix(key, "fleet\x00")
	if !fleet {
		var compute bool
		if rest, compute = strings.CutPrefix(key, "compute\x00"); !compute {
			return false, ""
		}
		rest, _, _ = strings.Cut(rest, "\x00")
	}
	if !r.owned {
		return true, ""
	}
	if t.conn == nil || !t.memoryFor(rest) {
		return false, ""
	}
	return true, rest
}

// readDoc returns the doc column q selects, from this transaction's
// reads when it has read it under key before, or from the records kept.
func (t *Tx) readDoc(key string, q string, args ...any) (string, error) {
	if doc, ok := t.docs[key]; ok {
		return doc, nil
	}
	r := t.db.records
	var gen uint64
	if r != nil && r.owned {
		// The generation before the fleet's memory is asked: a gain or a
		// loss after that moves it on.
		r.mu.Lock()
		gen = r.gen
		r.mu.Unlock()
	}
	kept, fleetID := t.keeps(r, key)
	if kept {
		r.mu.Lock()
		doc, ok := r.m[key]
		ok = ok && r.gen == gen
		r.mu.Unlock()
		if ok {
			if fleetID != "" {
				t.readMemory(fleetID)
				if err := t.fence(fleetID); err != nil {
					return "", err
				}
			}
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
		r.mu.Lock()
		if r.gen == gen && !t.wroteRecords {
			if len(r.m) >= maxRecordDocs {
				clear(r.m)
				clear(r.computes)
			}
			r.m[key] = doc
		}
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
