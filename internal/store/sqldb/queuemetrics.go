package sqldb

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// endedMillis is the ended column of p: when it reached its final status
// (its EndTime, or its StartTime if it has none), 0 while PENDING.
func endedMillis(p *game.Placement) int64 {
	if !p.Ended() {
		return 0
	}
	if p.EndTime.IsZero() {
		return max(store.Millis(p.StartTime), 1)
	}
	return store.Millis(p.EndTime)
}

func (t *Tx) QueueMetrics(name string, now, since, until time.Time) (game.QueueMetrics, error) {
	m := game.QueueMetrics{Queue: name}
	from, to := max(store.Millis(since), 1), store.Millis(until)
	var startedSum int64
	err := t.queryRow(`SELECT COUNT(*), COALESCE(SUM(started), 0) FROM placements WHERE queue = ? AND status = 'PENDING'`,
		name).Scan(&m.QueueDepth, &startedSum)
	if err != nil {
		return m, err
	}
	if m.QueueDepth > 0 {
		avgStart := float64(startedSum) / float64(m.QueueDepth)
		m.AverageWaitTime = max(0, (float64(store.Millis(now))-avgStart)/1000)
	}
	err = t.queryRow(`SELECT COUNT(*) FROM placements WHERE queue = ? AND started >= ? AND started < ?`,
		name, from, to).Scan(&m.PlacementsStarted)
	if err != nil {
		return m, err
	}
	// ended > 0, implied by the window, is spelled out: the index of end
	// times holds only ended placements (migration 262 on PostgreSQL,
	// 260 on SQLite).
	rows, err := t.query(`SELECT status, COUNT(*) FROM placements WHERE queue = ? AND ended >= ? AND ended < ? AND ended > 0
		GROUP BY status`,
		name, from, to)
	if err != nil {
		return m, err
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return m, err
		}
		switch status {
		case game.PlacementFulfilled:
			m.PlacementsSucceeded = n
		case game.PlacementFailed:
			m.PlacementsFailed = n
		case game.PlacementTimedOut:
			m.PlacementsTimedOut = n
		case game.PlacementCancelled:
			m.PlacementsCanceled = n
		}
	}
	return m, rows.Err()
}

func (t *Tx) ListPlacements(f store.PlacementFilter, p store.Page) ([]*game.Placement, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 50, 1000)
	q := `SELECT doc FROM placements WHERE 1 = 1`
	var args []any
	if f.Queue != "" {
		q += ` AND queue = ?`
		args = append(args, f.Queue)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if p.Token != "" {
		q += ` AND (started < ? OR (started = ? AND id < ?))`
		args = append(args, cur.Created, cur.Created, cur.ID)
	}
	q += ` ORDER BY started DESC, id DESC LIMIT ?`
	rows, err := t.query(q, append(args, n+1)...)
	out, err := scanDocs[game.Placement](rows, err)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		last := out[n-1]
		next = encodeCursor(createdCursor{store.Millis(last.StartTime), last.ID})
	}
	return out, next, nil
}
