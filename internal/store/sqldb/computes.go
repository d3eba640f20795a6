package sqldb

import (
	"encoding/json"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Computes are stored as a JSON document keyed by (fleet_id, name), with
// the columns that lists filter and sort on copied out of it. Auth tokens
// are stored by their hash only. Writes of a compute are fenced (owners.go):
// only the node owning its fleet registers, changes or removes it.

func (t *Tx) InsertCompute(c *game.Compute) error {
	if err := t.fence(c.FleetID); err != nil {
		return err
	}
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	t.wroteDocs()
	_, err = t.exec(`INSERT INTO computes (fleet_id, name, location, status, created, doc) VALUES (?, ?, ?, ?, ?, ?)`,
		c.FleetID, c.Name, c.Location, c.Status, store.Millis(c.CreationTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "compute %s is already registered to fleet %s", c.Name, c.FleetID)
	}
	return err
}

func (t *Tx) GetCompute(fleetID, name string) (*game.Compute, error) {
	key := "compute\x00" + fleetID + "\x00" + name
	if c := t.keptCompute(key); c != nil {
		return c, nil
	}
	doc, err := t.readDoc(key, `SELECT doc FROM computes WHERE fleet_id = ? AND name = ?`+t.lockShared(), fleetID, name)
	if errNoRows(err) {
		return nil, computeNotFound(fleetID, name)
	}
	if err != nil {
		return nil, err
	}
	if c := t.db.computeDocs.get(key, doc); c != nil {
		t.keepCompute(key, doc, c)
		return c, nil
	}
	var c game.Compute
	if err := json.Unmarshal([]byte(doc), &c); err != nil {
		return nil, err
	}
	t.keepCompute(key, doc, &c)
	t.db.computeDocs.put(key, doc, &c)
	return &c, nil
}

func computeNotFound(fleetID, name string) error {
	return game.Errorf(game.NotFound, "compute %s not found in fleet %s", name, fleetID)
}

func (t *Tx) UpdateCompute(c *game.Compute) error {
	if err := t.fence(c.FleetID); err != nil {
		return err
	}
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	t.wroteDocs()
	res, err := t.exec(`UPDATE computes SET location = ?, status = ?, doc = ? WHERE fleet_id = ? AND name = ?`,
		c.Location, c.Status, string(doc), c.FleetID, c.Name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return computeNotFound(c.FleetID, c.Name)
	}
	return nil
}

func (t *Tx) DeleteCompute(fleetID, name string) error {
	if err := t.fence(fleetID); err != nil {
		return err
	}
	t.wroteDocs()
	res, err := t.exec(`DELETE FROM computes WHERE fleet_id = ? AND name = ?`, fleetID, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return computeNotFound(fleetID, name)
	}
	_, err = t.exec(`DELETE FROM auth_tokens WHERE fleet_id = ? AND compute_name = ?`, fleetID, name)
	return err
}

func (t *Tx) ListComputes(fleetID string, f store.ComputeFilter, p store.Page) ([]*game.Compute, string, error) {
	var after string
	if err := decodeCursor(p.Token, &after); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	q := `SELECT doc FROM computes WHERE fleet_id = ? AND name > ?`
	args := []any{fleetID, after}
	if f.Location != "" {
		q += ` AND location = ?`
		args = append(args, f.Location)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	rows, err := t.query(q+` ORDER BY name LIMIT ?`, append(args, n+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Compute
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, "", err
		}
		var c game.Compute
		if err := json.Unmarshal([]byte(doc), &c); err != nil {
			return nil, "", err
		}
		out = append(out, &c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = encodeCursor(out[n-1].Name)
	}
	return out, next, nil
}

func (t *Tx) CountComputes(fleetID string) (map[string]int, error) {
	rows, err := t.query(`SELECT location, COUNT(*) FROM computes WHERE fleet_id = ? GROUP BY location`, fleetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var loc string
		var n int
		if err := rows.Scan(&loc, &n); err != nil {
			return nil, err
		}
		out[loc] = n
	}
	return out, rows.Err()
}

func (t *Tx) InsertAuthToken(a *game.AuthToken) error {
	_, err := t.exec(`INSERT INTO auth_tokens (hash, fleet_id, compute_name, expires, created) VALUES (?, ?, ?, ?, ?)`,
		a.Hash, a.FleetID, a.ComputeName, store.Millis(a.Expires), store.Millis(a.Created))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "auth token already exists")
	}
	return err
}

func (t *Tx) GetAuthToken(hash string) (*game.AuthToken, error) {
	a := game.AuthToken{Hash: hash}
	var expires, created int64
	err := t.queryRow(`SELECT fleet_id, compute_name, expires, created FROM auth_tokens WHERE hash = ?`, hash).
		Scan(&a.FleetID, &a.ComputeName, &expires, &created)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "auth token not found")
	}
	if err != nil {
		return nil, err
	}
	a.Expires, a.Created = store.FromMillis(expires), store.FromMillis(created)
	return &a, nil
}

func (t *Tx) DeleteExpiredAuthTokens(at time.Time) (int, error) {
	res, err := t.exec(`DELETE FROM auth_tokens WHERE expires <= ?`, store.Millis(at))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
