package sqldb

import (
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func (t *Tx) InsertFleet(f *game.Fleet) error {
	doc, err := json.Marshal(f)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO fleets (id, name, status, created, doc) VALUES (?, ?, ?, ?, ?)`,
		f.ID, f.Name, f.Status, store.Millis(f.CreationTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "fleet %s already exists", f.ID)
	}
	if err != nil {
		return err
	}
	if err := t.putFleetLocations(f); err != nil {
		return err
	}
	if err := t.ownNewFleet(f.ID); err != nil {
		return err
	}
	t.note(store.Change{Kind: store.FleetPut, ID: f.ID})
	return nil
}

func (t *Tx) putFleetLocations(f *game.Fleet) error {
	if _, err := t.exec(`DELETE FROM fleet_locations WHERE fleet_id = ?`, f.ID); err != nil {
		return err
	}
	for _, l := range f.Locations {
		if _, err := t.exec(`INSERT INTO fleet_locations (fleet_id, location) VALUES (?, ?) ON CONFLICT DO NOTHING`, f.ID, l); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) GetFleet(id string) (*game.Fleet, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM fleets WHERE id = ?`+t.lockShared(), id).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "fleet %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	var f game.Fleet
	return &f, json.Unmarshal([]byte(doc), &f)
}

func (t *Tx) UpdateFleet(f *game.Fleet) error {
	if err := t.fence(f.ID); err != nil {
		return err
	}
	doc, err := json.Marshal(f)
	if err != nil {
		return err
	}
	res, err := t.exec(`UPDATE fleets SET name = ?, status = ?, doc = ? WHERE id = ?`, f.Name, f.Status, string(doc), f.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "fleet %s not found", f.ID)
	}
	return t.putFleetLocations(f)
}

func (t *Tx) DeleteFleet(id string) error {
	if err := t.fence(id); err != nil {
		return err
	}
	res, err := t.exec(`DELETE FROM fleets WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "fleet %s not found", id)
	}
	if _, err = t.exec(`DELETE FROM fleet_locations WHERE fleet_id = ?`, id); err != nil {
		return err
	}
	if err := t.DropFleetOwner(id); err != nil {
		return err
	}
	t.note(store.Change{Kind: store.FleetDelete, ID: id})
	return nil
}

type createdCursor struct {
	Created int64  `json:"c"`
	ID      string `json:"i"`
}

func (t *Tx) ListFleets(p store.Page) ([]*game.Fleet, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	rows, err := t.query(`SELECT doc FROM fleets WHERE (created > ? OR (created = ? AND id > ?)) ORDER BY created, id LIMIT ?`,
		cur.Created, cur.Created, cur.ID, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Fleet
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, "", err
		}
		var f game.Fleet
		if err := json.Unmarshal([]byte(doc), &f); err != nil {
			return nil, "", err
		}
		out = append(out, &f)
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

func (t *Tx) FleetsInLocation(location string) ([]string, error) {
	rows, err := t.query(`SELECT fleet_id FROM fleet_locations WHERE location = ? ORDER BY fleet_id`, location)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
