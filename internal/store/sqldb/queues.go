package sqldb

import (
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Queues keep the whole record as JSON in doc; placements keep it in doc
// too, with what is queried (status, provisional session, deadline) as
// columns.

func (t *Tx) InsertQueue(q *game.Queue) error {
	doc, err := json.Marshal(q)
	if err != nil {
		return err
	}
	t.wroteDocs()
	_, err = t.exec(`INSERT INTO game_session_queues (name, created, doc) VALUES (?, ?, ?)`,
		q.Name, store.Millis(q.CreationTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "game session queue %s already exists", q.Name)
	}
	return err
}

func (t *Tx) GetQueue(name string) (*game.Queue, error) {
	doc, err := t.readDoc("queue\x00"+name, `SELECT doc FROM game_session_queues WHERE name = ?`+t.lockShared(), name)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "game session queue %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	if q := t.db.queueDocs.get(name, doc); q != nil {
		return q, nil
	}
	var q game.Queue
	if err := json.Unmarshal([]byte(doc), &q); err != nil {
		return nil, err
	}
	t.db.queueDocs.put(name, doc, &q)
	return &q, nil
}

func (t *Tx) UpdateQueue(q *game.Queue) error {
	doc, err := json.Marshal(q)
	if err != nil {
		return err
	}
	t.wroteDocs()
	res, err := t.exec(`UPDATE game_session_queues SET doc = ? WHERE name = ?`, string(doc), q.Name)
	return requireRow(res, err, "game session queue %s not found", q.Name)
}

func (t *Tx) DeleteQueue(name string) error {
	t.wroteDocs()
	res, err := t.exec(`DELETE FROM game_session_queues WHERE name = ?`, name)
	return requireRow(res, err, "game session queue %s not found", name)
}

func (t *Tx) ListQueues(p store.Page) ([]*game.Queue, string, error) {
	var after string
	if err := decodeCursor(p.Token, &after); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 50, 1000)
	rows, err := t.query(`SELECT doc FROM game_session_queues WHERE name > ? ORDER BY name LIMIT ?`, after, n+1)
	out, err := scanDocs[game.Queue](rows, err)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = encodeCursor(out[n-1].Name)
	}
	return out, next, nil
}
