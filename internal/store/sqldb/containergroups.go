package sqldb

import (
	"database/sql"
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Container group definitions: container_groups holds each name with its
// type and the last version number given out, container_group_versions
// each version as a JSON document. ARNs are not stored: the caller's
// Account derives them.

func (t *Tx) InsertContainerGroup(d *game.ContainerGroupDefinition) error {
	_, err := t.exec(`INSERT INTO container_groups (name, group_type, created, last_version) VALUES (?, ?, ?, 1)`,
		d.Name, d.Type, store.Millis(d.CreationTime))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "container group definition %s already exists", d.Name)
	}
	if err != nil {
		return err
	}
	d.Version = 1
	return t.insertContainerGroupVersion(d)
}

func (t *Tx) AddContainerGroupVersion(d *game.ContainerGroupDefinition) error {
	res, err := t.exec(`UPDATE container_groups SET last_version = last_version + 1 WHERE name = ?`, d.Name)
	if err := requireRow(res, err, "container group definition %s not found", d.Name); err != nil {
		return err
	}
	if err := t.queryRow(`SELECT last_version FROM container_groups WHERE name = ?`, d.Name).Scan(&d.Version); err != nil {
		return err
	}
	return t.insertContainerGroupVersion(d)
}

func (t *Tx) insertContainerGroupVersion(d *game.ContainerGroupDefinition) error {
	doc, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO container_group_versions (name, version, created, doc) VALUES (?, ?, ?, ?)`,
		d.Name, d.Version, store.Millis(d.CreationTime), string(doc))
	return err
}

func (t *Tx) GetContainerGroup(name string, version int) (*game.ContainerGroupDefinition, error) {
	var doc string
	var err error
	if version == 0 {
		err = t.queryRow(`SELECT doc FROM container_group_versions WHERE name = ? ORDER BY version DESC LIMIT 1`, name).Scan(&doc)
	} else {
		err = t.queryRow(`SELECT doc FROM container_group_versions WHERE name = ? AND version = ?`+t.lockShared(), name, version).Scan(&doc)
	}
	if errNoRows(err) {
		if version == 0 {
			return nil, game.Errorf(game.NotFound, "container group definition %s not found", name)
		}
		return nil, game.Errorf(game.NotFound, "container group definition %s version %d not found", name, version)
	}
	if err != nil {
		return nil, err
	}
	return decodeContainerGroup(doc)
}

func decodeContainerGroup(doc string) (*game.ContainerGroupDefinition, error) {
	var d game.ContainerGroupDefinition
	return &d, json.Unmarshal([]byte(doc), &d)
}

func (t *Tx) ContainerGroupVersions(name string) ([]int, error) {
	rows, err := t.query(`SELECT version FROM container_group_versions WHERE name = ? ORDER BY version DESC`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, game.Errorf(game.NotFound, "container group definition %s not found", name)
	}
	return out, nil
}

func (t *Tx) DeleteContainerGroupVersion(name string, version int) (bool, error) {
	res, err := t.exec(`DELETE FROM container_group_versions WHERE name = ? AND version = ?`, name, version)
	if err := requireRow(res, err, "container group definition %s version %d not found", name, version); err != nil {
		return false, err
	}
	var left int
	if err := t.queryRow(`SELECT COUNT(*) FROM container_group_versions WHERE name = ?`, name).Scan(&left); err != nil {
		return false, err
	}
	if left > 0 {
		return false, nil
	}
	_, err = t.exec(`DELETE FROM container_groups WHERE name = ?`, name)
	return err == nil, err
}

func (t *Tx) ListContainerGroups(groupType string, p store.Page) ([]*game.ContainerGroupDefinition, string, error) {
	var after string
	if err := decodeCursor(p.Token, &after); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 50, 100)
	rows, err := t.query(`SELECT v.doc FROM container_groups g
		JOIN container_group_versions v ON v.name = g.name
			AND v.version = (SELECT MAX(version) FROM container_group_versions m WHERE m.name = g.name)
		WHERE g.name > ? AND (? = '' OR g.group_type = ?)
		ORDER BY g.name LIMIT ?`, after, groupType, groupType, n+1)
	if err != nil {
		return nil, "", err
	}
	return containerGroupPage(rows, n, func(d *game.ContainerGroupDefinition) any { return d.Name })
}

func (t *Tx) ListContainerGroupVersions(name string, p store.Page) ([]*game.ContainerGroupDefinition, string, error) {
	var before int
	if err := decodeCursor(p.Token, &before); err != nil {
		return nil, "", err
	}
	var exists int
	err := t.queryRow(`SELECT COUNT(*) FROM container_groups WHERE name = ?`, name).Scan(&exists)
	if err != nil {
		return nil, "", err
	}
	if exists == 0 {
		return nil, "", game.Errorf(game.NotFound, "container group definition %s not found", name)
	}
	n := limit(p.Limit, 50, 100)
	rows, err := t.query(`SELECT doc FROM container_group_versions
		WHERE name = ? AND (? = 0 OR version < ?) ORDER BY version DESC LIMIT ?`, name, before, before, n+1)
	if err != nil {
		return nil, "", err
	}
	return containerGroupPage(rows, n, func(d *game.ContainerGroupDefinition) any { return d.Version })
}

// containerGroupPage reads a page of definitions (at most n, the query
// asked for n+1) and the token of the next, the position cursor gives of
// the page's last.
func containerGroupPage(rows *sql.Rows, n int, cursor func(*game.ContainerGroupDefinition) any) ([]*game.ContainerGroupDefinition, string, error) {
	defer rows.Close()
	var out []*game.ContainerGroupDefinition
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, "", err
		}
		d, err := decodeContainerGroup(doc)
		if err != nil {
			return nil, "", err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(out) <= n {
		return out, "", nil
	}
	out = out[:n]
	return out, encodeCursor(cursor(out[n-1])), nil
}
