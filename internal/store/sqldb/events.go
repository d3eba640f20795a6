package sqldb

import (
	"encoding/json"
	"math"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// InsertEvent implements store.EventTx. The row's seq, assigned by the
// database, orders events recorded in the same millisecond.
func (t *Tx) InsertEvent(e *game.Event) error {
	doc, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO fleet_events (id, fleet_id, time, doc) VALUES (?, ?, ?, ?)`,
		e.ID, e.FleetID, store.Millis(e.Time), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "event %s already exists", e.ID)
	}
	return err
}

// eventCursor is the position after the last event of a page.
type eventCursor struct {
	Time int64 `json:"t"`
	Seq  int64 `json:"s"`
}

// ListEvents implements store.EventTx: oldest first, keyset-paginated on
// (time, seq), bounded by start and end inclusive (zero bounds are open).
func (t *Tx) ListEvents(fleetID string, start, end time.Time, p store.Page) ([]*game.Event, string, error) {
	cur := eventCursor{Time: math.MinInt64}
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !start.IsZero() {
		lo = store.Millis(start)
	}
	if !end.IsZero() {
		hi = store.Millis(end)
	}
	n := limit(p.Limit, 100, 1000)
	rows, err := t.query(`SELECT seq, doc FROM fleet_events
		WHERE fleet_id = ? AND time >= ? AND time <= ? AND (time > ? OR (time = ? AND seq > ?))
		ORDER BY time, seq LIMIT ?`,
		fleetID, lo, hi, cur.Time, cur.Time, cur.Seq, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Event
	var seqs []int64
	for rows.Next() {
		var seq int64
		var doc string
		if err := rows.Scan(&seq, &doc); err != nil {
			return nil, "", err
		}
		var e game.Event
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return nil, "", err
		}
		out = append(out, &e)
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = encodeCursor(eventCursor{store.Millis(out[n-1].Time), seqs[n-1]})
	}
	return out, next, nil
}
