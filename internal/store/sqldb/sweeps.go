package sqldb

import (
	"strings"
	"time"
)

// The several-nodes sweeps (OrphanedProcesses, StrandedProcesses,
// EndedHoldings) run every second on every node, and each of them joined
// every holder record with its process: a scan of all the connected
// processes, to find, nearly always, nothing. Before that scan each now
// asks a question an index answers, and skips it when the answer is that
// nothing can match: which nodes holding processes are dead or gone (the
// holders' node index, walked from one distinct node id to the next), and
// whether any process not ended is disconnected (a partial index of
// those, on both stores). Their answers are the same: the first narrows
// the scan to what the scan's own condition would keep.

// holderFilter narrows a scan of process_holders h to some nodes.
type holderFilter struct {
	where string // " AND h.node_id IN (...)", or "" for every node
	args  []any
}

// maxDeadHolders bounds the node ids a holderFilter lists; past it the
// scan runs over every node, as it did without the filter.
const maxDeadHolders = 64

// deadHolders finds the nodes that hold some process's connection and are
// gone from nodes or whose heartbeat is ttl old by the database's clock.
// some is false when there are none: no holder record can then be an
// orphan's or an ended holding to prune.
func (t *Tx) deadHolders(ttl time.Duration) (f holderFilter, some bool, err error) {
	// The recursive part steps from one node id to the next in
	// process_holders_node: a handful of index seeks, however many
	// processes the nodes hold.
	rows, err := t.query(`WITH RECURSIVE held(id) AS (
			SELECT MIN(node_id) FROM process_holders
			UNION ALL
			SELECT (SELECT MIN(x.node_id) FROM process_holders x WHERE x.node_id > held.id) FROM held WHERE held.id IS NOT NULL)
		SELECT held.id FROM held LEFT JOIN nodes n ON n.id = held.id
		WHERE held.id IS NOT NULL AND (n.id IS NULL OR n.heartbeat <= `+t.dbNow()+` - ?)`, ttl.Milliseconds())
	if err != nil {
		return f, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return f, false, err
		}
		f.args = append(f.args, id)
	}
	if err := rows.Err(); err != nil {
		return f, false, err
	}
	switch n := len(f.args); {
	case n == 0:
		return f, false, nil
	case n > maxDeadHolders:
		return holderFilter{}, true, nil
	default:
		f.where = " AND h.node_id IN (?" + strings.Repeat(", ?", n-1) + ")"
		return f, true, nil
	}
}

// noneDisconnected reports whether no process that has not ended is
// marked disconnected, so that none can be stranded. The partial index
// processes_disconnected holds exactly those processes (nearly always
// none); SQLite is told to read it, and PostgreSQL's planner takes it,
// analyzed or not (TestStrandedSweepAsksTheDisconnectedIndex).
func (t *Tx) noneDisconnected() (bool, error) {
	from := "processes"
	if t.db.dialect.Name == "sqlite" {
		from += " INDEXED BY processes_disconnected"
	}
	var one int
	err := t.queryRow(`SELECT 1 FROM ` + from + ` WHERE connected = 0 AND status <> 'TERMINATED' LIMIT 1`).Scan(&one)
	if errNoRows(err) {
		return true, nil
	}
	return false, err
}
