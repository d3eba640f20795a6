package sqldb

import (
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func (t *Tx) InsertAlias(a *game.Alias) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO aliases (id, name, routing_type, fleet_id, created, doc) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ID, a.Name, a.RoutingType, a.FleetID, store.Millis(a.CreationTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "alias %s already exists", a.ID)
	}
	return err
}

func (t *Tx) GetAlias(id string) (*game.Alias, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM aliases WHERE id = ?`+t.lockShared(), id).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "alias %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	var a game.Alias
	return &a, json.Unmarshal([]byte(doc), &a)
}

func (t *Tx) UpdateAlias(a *game.Alias) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	res, err := t.exec(`UPDATE aliases SET name = ?, routing_type = ?, fleet_id = ?, doc = ? WHERE id = ?`,
		a.Name, a.RoutingType, a.FleetID, string(doc), a.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "alias %s not found", a.ID)
	}
	return nil
}

func (t *Tx) DeleteAlias(id string) error {
	res, err := t.exec(`DELETE FROM aliases WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "alias %s not found", id)
	}
	return nil
}

func (t *Tx) ListAliases(routingType, name string, p store.Page) ([]*game.Alias, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	rows, err := t.query(`SELECT doc FROM aliases
		WHERE (created > ? OR (created = ? AND id > ?)) AND (? = '' OR routing_type = ?) AND (? = '' OR name = ?)
		ORDER BY created, id LIMIT ?`,
		cur.Created, cur.Created, cur.ID, routingType, routingType, name, name, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Alias
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, "", err
		}
		var a game.Alias
		if err := json.Unmarshal([]byte(doc), &a); err != nil {
			return nil, "", err
		}
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		last := out[n-1]
		next = encodeCursor(createdCursor{store.Millis(last.CreationTime), last.ID})
	}
	return out, next, nil
}
