package sqldb

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func (t *Tx) InsertLocation(l *game.Location) error {
	_, err := t.exec(`INSERT INTO locations (name, arn, created) VALUES (?, ?, ?)`, l.Name, l.ARN, store.Millis(l.CreationTime))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "location %s already exists", l.Name)
	}
	return err
}

func (t *Tx) GetLocation(name string) (*game.Location, error) {
	var l game.Location
	var created int64
	err := t.queryRow(`SELECT name, arn, created FROM locations WHERE name = ?`+t.lock(), name).Scan(&l.Name, &l.ARN, &created)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "location %s not found", name)
	}
	l.CreationTime = store.FromMillis(created)
	return &l, err
}

func (t *Tx) ListLocations(p store.Page) ([]*game.Location, string, error) {
	var after string
	if err := decodeCursor(p.Token, &after); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 200)
	rows, err := t.query(`SELECT name, arn, created FROM locations WHERE name > ? ORDER BY name LIMIT ?`, after, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Location
	for rows.Next() {
		var l game.Location
		var created int64
		if err := rows.Scan(&l.Name, &l.ARN, &created); err != nil {
			return nil, "", err
		}
		l.CreationTime = store.FromMillis(created)
		out = append(out, &l)
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

func (t *Tx) DeleteLocation(name string) error {
	res, err := t.exec(`DELETE FROM locations WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return game.Errorf(game.NotFound, "location %s not found", name)
	}
	return nil
}
