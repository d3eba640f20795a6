package sqldb

import (
	"encoding/json"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// dbNow is the database's clock in epoch milliseconds: node liveness is
// judged by one clock, whatever the nodes' own clocks say.
func (t *Tx) dbNow() string {
	if t.db.dialect.Name == "postgres" {
		return `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)`
	}
	return `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
}

func (t *Tx) BeatNode(n *store.Node) error {
	now := t.dbNow()
	_, err := t.exec(`INSERT INTO nodes (id, address, started, heartbeat, draining, owns_fleets) VALUES (?, ?, ?, `+now+`, ?, ?)
		ON CONFLICT (id) DO UPDATE SET address = excluded.address, heartbeat = excluded.heartbeat, draining = excluded.draining,
		owns_fleets = excluded.owns_fleets`,
		n.ID, n.Address, store.Millis(n.Started), flag(n.Draining), flag(n.OwnsFleets))
	return err
}

const nodeColumns = `id, address, started, draining, owns_fleets, heartbeat, `

func (t *Tx) nodeAlive() string {
	return `CASE WHEN heartbeat > ` + t.dbNow() + ` - ? THEN 1 ELSE 0 END`
}

func scanNode(sc interface{ Scan(...any) error }) (*store.Node, error) {
	var n store.Node
	var started, beat int64
	var draining, owns, alive int
	if err := sc.Scan(&n.ID, &n.Address, &started, &draining, &owns, &beat, &alive); err != nil {
		return nil, err
	}
	n.Started, n.Draining, n.Alive, n.Heartbeat = store.FromMillis(started), draining == 1, alive == 1, store.FromMillis(beat)
	n.OwnsFleets = owns == 1
	return &n, nil
}

func (t *Tx) GetNode(id string, ttl time.Duration) (*store.Node, error) {
	n, err := scanNode(t.queryRow(`SELECT `+nodeColumns+t.nodeAlive()+` FROM nodes WHERE id = ?`, ttl.Milliseconds(), id))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "node %s not found", id)
	}
	return n, err
}

func (t *Tx) ListNodes(ttl time.Duration) ([]*store.Node, error) {
	rows, err := t.query(`SELECT `+nodeColumns+t.nodeAlive()+` FROM nodes ORDER BY started, id`, ttl.Milliseconds())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func (t *Tx) DeleteNode(id string) error {
	_, err := t.exec(`DELETE FROM nodes WHERE id = ?`, id)
	return err
}

func (t *Tx) HoldProcess(k store.ProcessKey, nodeID string) error {
	_, err := t.exec(`INSERT INTO process_holders (fleet_id, compute, pid, node_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (fleet_id, compute, pid) DO UPDATE SET node_id = excluded.node_id`,
		k.FleetID, k.ComputeName, k.PID, nodeID)
	return err
}

func (t *Tx) ReleaseProcess(k store.ProcessKey, nodeID string) (bool, error) {
	res, err := t.exec(`DELETE FROM process_holders WHERE fleet_id = ? AND compute = ? AND pid = ? AND node_id = ?`,
		k.FleetID, k.ComputeName, k.PID, nodeID)
	return affected(res, err)
}

func (t *Tx) ProcessHolder(k store.ProcessKey) (string, error) {
	var id string
	err := t.queryRow(`SELECT node_id FROM process_holders WHERE fleet_id = ? AND compute = ? AND pid = ?`,
		k.FleetID, k.ComputeName, k.PID).Scan(&id)
	if errNoRows(err) {
		return "", nil
	}
	return id, err
}

func (t *Tx) OrphanedProcesses(ttl time.Duration, max int) ([]store.ProcessKey, error) {
	dead, some, err := t.deadHolders(ttl)
	if err != nil || !some {
		return nil, err
	}
	owned, ownedArgs := t.ownedOnly("h.fleet_id")
	rows, err := t.query(`SELECT h.fleet_id, h.compute, h.pid FROM process_holders h
		JOIN processes p ON p.fleet_id = h.fleet_id AND p.compute = h.compute AND p.pid = h.pid
		LEFT JOIN nodes n ON n.id = h.node_id
		WHERE p.connected = 1 AND p.status <> 'TERMINATED' AND (n.id IS NULL OR n.heartbeat <= `+t.dbNow()+` - ?)`+owned+dead.where+`
		ORDER BY h.fleet_id, h.compute, h.pid LIMIT ?`, append(append(append([]any{ttl.Milliseconds()}, ownedArgs...), dead.args...), max)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ProcessKey
	for rows.Next() {
		var k store.ProcessKey
		if err := rows.Scan(&k.FleetID, &k.ComputeName, &k.PID); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func scanKeys(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, withNode bool) ([]store.Holding, error) {
	var out []store.Holding
	for rows.Next() {
		var h store.Holding
		dst := []any{&h.Process.FleetID, &h.Process.ComputeName, &h.Process.PID}
		if withNode {
			dst = append(dst, &h.NodeID)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

func (t *Tx) StrandedProcesses(nodeID string, max int) ([]store.ProcessKey, error) {
	if none, err := t.noneDisconnected(); err != nil || none {
		return nil, err
	}
	owned, ownedArgs := t.ownedOnly("h.fleet_id")
	rows, err := t.query(`SELECT h.fleet_id, h.compute, h.pid FROM process_holders h
		JOIN processes p ON p.fleet_id = h.fleet_id AND p.compute = h.compute AND p.pid = h.pid
		WHERE h.node_id = ? AND p.connected = 0 AND p.status <> 'TERMINATED'`+owned+`
		ORDER BY h.fleet_id, h.compute, h.pid LIMIT ?`, append(append([]any{nodeID}, ownedArgs...), max)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list, err := scanKeys(rows, false)
	out := make([]store.ProcessKey, len(list))
	for i, h := range list {
		out[i] = h.Process
	}
	return out, err
}

func (t *Tx) EndedHoldings(ttl time.Duration, max int) ([]store.Holding, error) {
	dead, some, err := t.deadHolders(ttl)
	if err != nil || !some {
		return nil, err
	}
	rows, err := t.query(`SELECT h.fleet_id, h.compute, h.pid, h.node_id FROM process_holders h
		LEFT JOIN processes p ON p.fleet_id = h.fleet_id AND p.compute = h.compute AND p.pid = h.pid
		LEFT JOIN nodes n ON n.id = h.node_id
		WHERE (p.pid IS NULL OR p.status = 'TERMINATED') AND (n.id IS NULL OR n.heartbeat <= `+t.dbNow()+` - ?)`+dead.where+`
		ORDER BY h.fleet_id, h.compute, h.pid LIMIT ?`, append(append([]any{ttl.Milliseconds()}, dead.args...), max)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanKeys(rows, true)
}

// ReleaseNodeProcesses rewrites the connected and disconnected_at columns
// and, so that GetProcess reads the same, the same fields in doc.
func (t *Tx) ReleaseNodeProcesses(nodeID string, at time.Time) (int, error) {
	when, err := json.Marshal(at)
	if err != nil {
		return 0, err
	}
	doc := `json_set(doc, '$.Connected', json('false'), '$.DisconnectedAt', json(?))`
	if t.db.dialect.Name == "postgres" {
		doc = `CAST(jsonb_set(jsonb_set(CAST(doc AS jsonb), '{Connected}', 'false'), '{DisconnectedAt}', CAST(? AS jsonb)) AS TEXT)`
	}
	n := 0
	err = t.visitProcesses(`UPDATE processes SET connected = 0, disconnected_at = ?, doc = `+doc+`, version = version + 1
		WHERE connected = 1 AND status <> 'TERMINATED' AND EXISTS (SELECT 1 FROM process_holders h
			WHERE h.fleet_id = processes.fleet_id AND h.compute = processes.compute AND h.pid = processes.pid AND h.node_id = ?)
		RETURNING doc, game_session_id, version`, []any{store.Millis(at), string(when), nodeID},
		func(c store.Change) error {
			n++
			c.Process.Connected, c.Process.DisconnectedAt = false, at
			t.noteProcess(c.Process, c.Version)
			return nil
		})
	if err != nil {
		return 0, err
	}
	_, err = t.exec(`DELETE FROM process_holders WHERE node_id = ?`, nodeID)
	return n, err
}
