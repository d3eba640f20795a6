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
	rows, err := t.query(`SELECT status, COUNT(*) FROM placements WHERE queue = ? AND ended >= ? AND ended < ? GROUP BY status`,
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

type placementCursor struct {
	S  int64  `json:"s"`
	ID string `json:"i"`
}

func (t *Tx) ListPlacements(f store.PlacementFilter, p store.Page) ([]*game.Placement, string, error) {
	var cur placementCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 50, 1000)
	q := `SELECT doc, started FROM placements WHERE 1 = 1`
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
		args = append(args, cur.S, cur.S, cur.ID)
	}
	q += ` ORDER BY started DESC, id DESC LIMIT ?`
	args = append(args, n+1)
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.Placement
	var last int64
	for rows.Next() {
		var started int64
		pl, err := scanPlacement(scanFirst{rows, &started})
		if err != nil {
			return nil, "", err
		}
		if len(out) < n {
			last = started
		}
		out = append(out, pl)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = encodeCursor(placementCursor{S: last, ID: out[n-1].ID})
	}
	return out, next, nil
}

// scanFirst scans the doc column into scanPlacement's target and the
// extra columns after it.
type scanFirst struct {
	sc    interface{ Scan(...any) error }
	extra *int64
}

func (s scanFirst) Scan(dest ...any) error { return s.sc.Scan(append(dest, s.extra)...) }
