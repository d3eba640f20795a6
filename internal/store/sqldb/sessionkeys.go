package sqldb

// Game session row keys taken ahead, for grouped writes on PostgreSQL.
// An INSERT that returns its row's key is a round trip the committer
// waits for; one whose key is known already needs no answer and is queued
// in the pipeline (pipeline.go). So the committer takes keys from the
// table's sequence a block at a time, in one statement, and gives one to
// each game session it inserts. A sequence hands each value out once
// whatever becomes of the transaction that asked, so keys stay unique
// across nodes; a key whose insert is undone is left unused, as a failed
// insert leaves a gap today. Keys follow each other on one node, not
// across nodes; nothing relies on more than their uniqueness (a session's
// order is its creation time, its key only breaking ties).

// sessionKeyBlock is how many keys one statement takes.
const sessionKeyBlock = 64

// nextSessionKey returns a game_sessions row key not used yet, taking a
// block of them first when none is left. Only the committer's
// transactions call it (one at a time).
func (t *Tx) nextSessionKey() (int64, error) {
	if len(t.db.sessionKeys) == 0 {
		rows, err := t.query(`SELECT nextval(pg_get_serial_sequence('game_sessions', 'pk')) FROM generate_series(1, ?)`, sessionKeyBlock)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		var keys []int64
		for rows.Next() {
			var k int64
			if err := rows.Scan(&k); err != nil {
				return 0, err
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil {
			return 0, err
		}
		t.db.sessionKeys = keys
	}
	k := t.db.sessionKeys[0]
	t.db.sessionKeys = t.db.sessionKeys[1:]
	return k, nil
}
