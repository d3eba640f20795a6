package sqldb

import (
	"encoding/json"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Fleet metrics are aggregate queries over one fleet's records, each
// served by an index that starts with fleet_id (player sessions by their
// activation time), so a measurement reads what is live or what changed
// in the window, not a fleet's whole history.

// measure is FleetMetrics under construction, by location.
type measure struct {
	byLoc   map[string]*game.FleetMetrics
	cap     int            // MaxConcurrentGameSessionActivations, 0: none
	busy    map[string]int // computes hosting a live session, by location
	active  map[[2]string]int
	perComp map[[2]string]int // free processes by (location, compute)
}

func (m *measure) at(loc string) *game.FleetMetrics {
	fm := m.byLoc[loc]
	if fm == nil {
		fm = &game.FleetMetrics{Location: loc}
		m.byLoc[loc] = fm
	}
	return fm
}

// SetLiveSessionCounts makes FleetMetrics count live game sessions from
// counts (the live sessions in memory) rather than grouping them in SQL,
// which at 100,000 sessions took a third of a second of CPU at every
// metrics refresh; the fleets it does not answer for are grouped in SQL.
// Call it once, before the DB serves reads, and only with a memory every
// write of the fleets it answers for reaches (one server on SQLite; the
// fleets a node owns on PostgreSQL).
func (db *DB) SetLiveSessionCounts(counts store.LiveSessionCounts) { db.counts = counts }

func (t *Tx) FleetMetrics(f *game.Fleet, since, until time.Time) ([]game.FleetMetrics, error) {
	m := &measure{byLoc: map[string]*game.FleetMetrics{}, cap: f.Runtime.MaxConcurrentGameSessionActivations,
		busy: map[string]int{}, active: map[[2]string]int{}, perComp: map[[2]string]int{}}
	from, to := max(store.Millis(since), 1), store.Millis(until)
	steps := []struct {
		q    string
		args []any
		scan func(loc string, n []int64)
	}{
		{`SELECT location, compute, SUM(CASE WHEN status = 'ACTIVATING' THEN 1 ELSE 0 END),
			SUM(CASE WHEN status = 'ACTIVE' THEN 1 ELSE 0 END), SUM(cur_players)
			FROM game_sessions WHERE fleet_id = ? AND status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')
			GROUP BY location, compute`, []any{f.ID}, nil},
		{`SELECT location, compute, COUNT(*), SUM(healthy),
			SUM(CASE WHEN healthy = 1 AND connected = 1 AND game_session_id = '' THEN 1 ELSE 0 END)
			FROM processes WHERE fleet_id = ? AND status = 'ACTIVE' GROUP BY location, compute`, []any{f.ID}, nil},
		{`SELECT location, COUNT(*) FROM processes WHERE fleet_id = ? AND activated >= ? AND activated < ?
			GROUP BY location`, []any{f.ID, from, to},
			func(loc string, n []int64) { m.at(loc).ServerProcessActivations = int(n[0]) }},
		// ended > 0, implied by the window, is spelled out: the index of
		// processes' end times holds only ended ones (migration 261 on
		// PostgreSQL, 260 on SQLite).
		{`SELECT location, COUNT(*), SUM(abnormal) FROM processes WHERE fleet_id = ? AND ended >= ? AND ended < ? AND ended > 0
			GROUP BY location`, []any{f.ID, from, to},
			func(loc string, n []int64) {
				m.at(loc).ServerProcessTerminations, m.at(loc).ServerProcessAbnormalTerminations = int(n[0]), int(n[1])
			}},
		{`SELECT location, COUNT(*) FROM game_sessions WHERE fleet_id = ? AND ended >= ? AND ended < ? AND ended > 0
			AND reason = 'INTERRUPTED' GROUP BY location`, []any{f.ID, from, to},
			func(loc string, n []int64) { m.at(loc).GameSessionInterruptions = int(n[0]) }},
		// CROSS JOIN: SQLite starts from the player sessions of the window
		// (few) rather than from the fleet's game sessions (all of them).
		// activated > 0, implied by the window, is spelled out: SQLite's
		// index of activation times holds only those rows (migration 230).
		{`SELECT g.location, COUNT(*) FROM player_sessions p CROSS JOIN game_sessions g
			WHERE p.activated >= ? AND p.activated < ? AND p.activated > 0 AND g.id = p.game_session_id AND g.fleet_id = ? GROUP BY g.location`,
			[]any{from, to, f.ID},
			func(loc string, n []int64) { m.at(loc).PlayerSessionActivations = int(n[0]) }},
	}
	computes, err := t.CountComputes(f.ID)
	if err != nil {
		return nil, err
	}
	for loc, n := range computes {
		m.at(loc).ActiveInstances = n
	}
	for i, st := range steps {
		switch {
		case i == 0 && t.db.counts != nil && t.db.counts.CountLive(f.ID, func(loc, compute string, activating, active, players int64) {
			m.sessions(loc, compute, []int64{activating, active, players})
		}):
		case i == 0:
			err = t.eachCompute(st.q, st.args, m.sessions)
		case i == 1:
			err = t.eachCompute(st.q, st.args, m.processes)
		default:
			err = t.eachLocation(st.q, st.args, st.scan)
		}
		if err != nil {
			return nil, err
		}
	}
	return m.result(f), nil
}

// sessions takes one (location, compute) row of live game sessions.
func (m *measure) sessions(loc, compute string, n []int64) {
	fm := m.at(loc)
	fm.ActivatingGameSessions += int(n[0])
	fm.ActiveGameSessions += int(n[1])
	fm.CurrentPlayerSessions += int(n[2])
	if compute != "" {
		m.busy[loc]++
		m.active[[2]string{loc, compute}] = int(n[0])
	}
}

// processes takes one (location, compute) row of ACTIVE processes.
func (m *measure) processes(loc, compute string, n []int64) {
	fm := m.at(loc)
	fm.ActiveServerProcesses += int(n[0])
	fm.HealthyServerProcesses += int(n[1])
	fm.AvailableGameSessions += int(n[2])
	m.perComp[[2]string{loc, compute}] = int(n[2])
}

// result completes the per-location numbers in the fleet's location order
// (locations the fleet no longer has are left out).
func (m *measure) result(f *game.Fleet) []game.FleetMetrics {
	for key, free := range m.perComp {
		if m.cap > 0 {
			free = min(free, max(0, m.cap-m.active[key]))
		}
		m.at(key[0]).ConcurrentActivatableGameSessions += free
	}
	out := make([]game.FleetMetrics, 0, len(f.Locations))
	for _, loc := range f.Locations {
		fm := *m.at(loc)
		fm.FleetID = f.ID
		fm.IdleInstances = max(0, fm.ActiveInstances-m.busy[loc])
		out = append(out, fm)
	}
	return out
}

// eachLocation runs q, whose rows are a location and integer columns.
func (t *Tx) eachLocation(q string, args []any, fn func(loc string, n []int64)) error {
	return t.eachRow(q, args, 1, func(keys []string, n []int64) { fn(keys[0], n) })
}

// eachCompute runs q, whose rows are a location, a compute and integers.
func (t *Tx) eachCompute(q string, args []any, fn func(loc, compute string, n []int64)) error {
	return t.eachRow(q, args, 2, func(keys []string, n []int64) { fn(keys[0], keys[1], n) })
}

// eachRow scans rows of nkeys text columns then integer columns (NULL
// sums read as 0).
func (t *Tx) eachRow(q string, args []any, nkeys int, fn func(keys []string, n []int64)) error {
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	keys := make([]string, nkeys)
	nums := make([]*int64, len(cols)-nkeys)
	dest := make([]any, len(cols))
	for i := range keys {
		dest[i] = &keys[i]
	}
	for i := range nums {
		dest[nkeys+i] = &nums[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		n := make([]int64, len(nums))
		for i, p := range nums {
			if p != nil {
				n[i] = *p
			}
		}
		fn(keys, n)
	}
	return rows.Err()
}

func (t *Tx) InsertMetricMinutes(ms []game.MetricMinute) (int, error) {
	inserted := 0
	for _, m := range ms {
		doc, err := json.Marshal(m.Values)
		if err != nil {
			return inserted, err
		}
		res, err := t.exec(`INSERT INTO metric_minutes (resource, location, minute, doc) VALUES (?, ?, ?, ?)
			ON CONFLICT (resource, location, minute) DO NOTHING`, m.Resource, m.Location, store.Millis(m.Minute), string(doc))
		if err != nil {
			return inserted, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return inserted, err
		}
		inserted += int(n)
	}
	return inserted, nil
}

func (t *Tx) MetricMinutes(resource, location string, from, to time.Time, limit int) ([]game.MetricMinute, error) {
	q := `SELECT location, minute, doc FROM metric_minutes WHERE resource = ? AND minute >= ? AND minute < ?`
	args := []any{resource, store.Millis(from), store.Millis(to)}
	if location != "" {
		q += ` AND location = ?`
		args = append(args, location)
	}
	rows, err := t.query(q+` ORDER BY location, minute LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []game.MetricMinute
	for rows.Next() {
		m := game.MetricMinute{Resource: resource}
		var minute int64
		var doc string
		if err := rows.Scan(&m.Location, &minute, &doc); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(doc), &m.Values); err != nil {
			return nil, err
		}
		m.Minute = store.FromMillis(minute)
		out = append(out, m)
	}
	return out, rows.Err()
}

func (t *Tx) DeleteMetricMinutes(before time.Time, limit int) (int, error) {
	res, err := t.exec(`DELETE FROM metric_minutes WHERE (resource, location, minute) IN
		(SELECT resource, location, minute FROM metric_minutes WHERE minute < ? ORDER BY minute LIMIT ?)`,
		store.Millis(before), limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
