package sqldb

import (
	"encoding/json"
	"errors"
	"fmt"

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
	t.db.queueDocs.drop(q.Name)
	_, err = t.exec(`INSERT INTO game_session_queues (name, created, doc) VALUES (?, ?, ?)`,
		q.Name, store.Millis(q.CreationTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "game session queue %s already exists", q.Name)
	}
	return err
}

// A queue is any node's to change or delete (UpdateGameSessionQueue and
// DeleteGameSessionQueue are fenced by no fleet), so a write transaction
// on PostgreSQL reads it FOR SHARE: the change waits for the reader's
// commit, and the reader's decisions (a placement's deadline, its event's
// target) stand on the definition that is current when it commits.
//
// A grouped, pipelined transaction (an owning node's committer) need not
// spend a round trip on that read: it takes the queue as this store last
// read it (queueDocs, any transaction's read) and queues, for the job's
// next round trip, the same lock guarded on that same document:
//
//	SELECT 1 FROM game_session_queues WHERE name = ? AND doc = ? FOR SHARE
//
// It reaches the database ahead of every statement the job sends after
// the read, so the row is share-locked before any write that depends on
// it, as the read locked it. A queue changed or deleted since it was last
// read (by another node, or by an earlier job of the batch) selects
// nothing; PostgreSQL rechecks the condition against the newest version
// when it waited for a writer. The guard then fails the job with
// errQueueMoved: the job is undone to its savepoint and run once more
// (batch.go), now reading its queues from the store. An unknown queue is
// never taken as last read: it is read, and answers NotFound. Within a
// batch, a queue read once (or guarded once) is not read again
// (docs.go).

// A job that fails after taking a queue as last read, its guard still
// queued, sends it before its failure stands: a refusal made on a queue
// that has changed since (a placement's override refused by the old
// priority order, say) runs the job again instead.

// errQueueMoved fails a job whose queue, as last read, is no longer the
// store's: the job runs again, reading it from the store.
var errQueueMoved = errors.New("game session queue changed since it was last read")

// queueMoved reports a job to run again reading its queues from the store.
func queueMoved(err error) bool { return errors.Is(err, errQueueMoved) }

// keptQueue answers GetQueue as last read, with its guard queued (see
// above); nil when the store must.
func (t *Tx) keptQueue(key, name string) *game.Queue {
	if t.conn == nil || !t.writable || t.storeQueues || t.docs == nil {
		return nil
	}
	if _, ok := t.docs[key]; ok {
		return nil // read in this batch: readDoc answers
	}
	doc, q := t.db.queueDocs.latest(name)
	if q == nil {
		return nil
	}
	t.queue(queued{q: `SELECT 1 FROM game_session_queues WHERE name = ? AND doc = ? FOR SHARE`, args: []any{name, doc},
		guarded: true, selects: true, queueGuard: name, queueDoc: doc, check: func(n int64, err error) error {
			if err == nil && n == 0 {
				return t.queueMoved(name)
			}
			return err
		}})
	t.docs[key] = doc
	return q
}

// queueMoved is the failure of queue name's guard.
func (t *Tx) queueMoved(name string) error {
	t.db.queueDocs.drop(name)
	return fmt.Errorf("game session queue %s: %w", name, errQueueMoved)
}

// queueGuardQueued reports a queue's guard queued and not yet sent.
func (t *Tx) queueGuardQueued() bool {
	for _, p := range t.pipe {
		if p.queueGuard != "" {
			return true
		}
	}
	return false
}

// takeQueueGuard takes queue name's guard off the pipeline when it is the
// last statement queued, for the caller to run it in a statement of its
// own (InsertPlacement): nothing queued after it waits for its lock. It
// answers the document the guard holds the queue to.
func (t *Tx) takeQueueGuard(name string) (doc string, ok bool) {
	n := len(t.pipe)
	if n == 0 || t.pipe[n-1].queueGuard != name || name == "" {
		return "", false
	}
	doc = t.pipe[n-1].queueDoc
	t.pipe = t.pipe[:n-1]
	return doc, true
}

func (t *Tx) GetQueue(name string) (*game.Queue, error) {
	key := "queue\x00" + name
	if q := t.keptQueue(key, name); q != nil {
		return q, nil
	}
	doc, err := t.readDoc(key, `SELECT doc FROM game_session_queues WHERE name = ?`+t.lockShared(), name)
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
	t.db.queueDocs.drop(q.Name)
	res, err := t.exec(`UPDATE game_session_queues SET doc = ? WHERE name = ?`, string(doc), q.Name)
	return requireRow(res, err, "game session queue %s not found", q.Name)
}

func (t *Tx) DeleteQueue(name string) error {
	t.wroteDocs()
	t.db.queueDocs.drop(name)
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
