package sqldb

import (
	"database/sql"
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func (t *Tx) InsertFleet(f *game.Fleet) error {
	doc, err := json.Marshal(f)
	if err != nil {
		return err
	}
	t.wroteDocs()
	_, err = t.exec(`INSERT INTO fleets (id, name, status, created, compute_type, doc) VALUES (?, ?, ?, ?, ?, ?)`,
		f.ID, f.Name, f.Status, store.Millis(f.CreationTime), computeType(f), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "fleet %s already exists", f.ID)
	}
	if err != nil {
		return err
	}
	if err := t.putFleetLocations(f); err != nil {
		return err
	}
	if err := t.putFleetContainerGroups(f); err != nil {
		return err
	}
	if err := t.ownNewFleet(f.ID); err != nil {
		return err
	}
	t.note(store.Change{Kind: store.FleetPut, ID: f.ID})
	return nil
}

// computeType is the fleet's compute_type column: a fleet stored before
// the column existed is an Anywhere fleet.
func computeType(f *game.Fleet) string {
	if f.ComputeType == "" {
		return game.ComputeAnywhere
	}
	return f.ComputeType
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
	doc, err := t.readDoc("fleet\x00"+id, `SELECT doc FROM fleets WHERE id = ?`+t.lockShared(), id)
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
	t.wroteDocs()
	res, err := t.exec(`UPDATE fleets SET name = ?, status = ?, doc = ? WHERE id = ?`, f.Name, f.Status, string(doc), f.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "fleet %s not found", f.ID)
	}
	if err := t.putFleetLocations(f); err != nil {
		return err
	}
	return t.putFleetContainerGroups(f)
}

func (t *Tx) DeleteFleet(id string) error {
	if err := t.fence(id); err != nil {
		return err
	}
	t.wroteDocs()
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
	if _, err = t.exec(`DELETE FROM fleet_container_groups WHERE fleet_id = ?`, id); err != nil {
		return err
	}
	if _, err = t.exec(`DELETE FROM scaling_policies WHERE fleet_id = ?`, id); err != nil {
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
	return fleetPage(rows, n)
}

// fleetPage reads a page of fleets (at most n, the query asked for n+1)
// and the token of the next.
func fleetPage(rows *sql.Rows, n int) ([]*game.Fleet, string, error) {
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
	return t.queryStrings(`SELECT fleet_id FROM fleet_locations WHERE location = ? ORDER BY fleet_id`, location)
}

// putFleetContainerGroups records which definitions a container fleet
// runs.
func (t *Tx) putFleetContainerGroups(f *game.Fleet) error {
	if _, err := t.exec(`DELETE FROM fleet_container_groups WHERE fleet_id = ?`, f.ID); err != nil {
		return err
	}
	if f.Container == nil {
		return nil
	}
	for _, g := range []game.ContainerGroupUse{f.Container.GameServerGroup, f.Container.PerInstanceGroup} {
		if g.Name == "" {
			continue
		}
		if _, err := t.exec(`INSERT INTO fleet_container_groups (fleet_id, name, version) VALUES (?, ?, ?)`, f.ID, g.Name, g.Version); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) ListContainerFleets(group string, version int, p store.Page) ([]*game.Fleet, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	rows, err := t.query(`SELECT doc FROM fleets WHERE compute_type = ?
		AND (created > ? OR (created = ? AND id > ?))
		AND (? = '' OR id IN (SELECT fleet_id FROM fleet_container_groups WHERE name = ? AND (? = 0 OR version = ?)))
		ORDER BY created, id LIMIT ?`,
		game.ComputeContainer, cur.Created, cur.Created, cur.ID, group, group, version, version, n+1)
	if err != nil {
		return nil, "", err
	}
	return fleetPage(rows, n)
}

func (t *Tx) FleetsUsingContainerGroup(name string) ([]store.FleetGroupUse, error) {
	rows, err := t.query(`SELECT fleet_id, version FROM fleet_container_groups WHERE name = ? ORDER BY fleet_id`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.FleetGroupUse
	for rows.Next() {
		var u store.FleetGroupUse
		if err := rows.Scan(&u.FleetID, &u.Version); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
