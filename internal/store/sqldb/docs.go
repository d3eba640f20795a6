package sqldb

// Within one grouped write transaction, the records that many jobs read
// and few change (fleets, queues, computes) are read from the database
// once: a batch of placements on one queue and fleet would otherwise read
// the same queue, fleet and computes again for every job, a round trip
// each. What a read locks (FOR SHARE on PostgreSQL) the transaction
// keeps until it ends. Any write of those tables, and any job undone to
// its savepoint (which drops the locks it took), forgets them all.

// readDoc returns the doc column q selects, from this transaction's
// reads when it has read it under key before.
func (t *Tx) readDoc(key string, q string, args ...any) (string, error) {
	if doc, ok := t.docs[key]; ok {
		return doc, nil
	}
	var doc string
	if err := t.queryRow(q, args...).Scan(&doc); err != nil {
		return "", err
	}
	if t.docs != nil {
		t.docs[key] = doc
	}
	return doc, nil
}

// forgetDocs drops what readDoc kept.
func (t *Tx) forgetDocs() {
	if len(t.docs) > 0 {
		clear(t.docs)
	}
}
