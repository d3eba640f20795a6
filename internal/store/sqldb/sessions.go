package sqldb

import (
	"strings"
	"time"

	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Game sessions live in game_sessions: the whole record as JSON in doc,
// and as columns what is queried or changed on its own (status, name,
// seats, policy). Columns win over doc when a session is read back, so a
// seat change may update cur_players alone. Properties are also rows of
// game_session_properties, for search.

const sessionColumns = `pk, doc, status, name, max_players, cur_players, policy, ended`

// scanSession reads one row of sessionColumns.
func scanSession(sc interface{ Scan(...any) error }) (int64, *game.GameSession, error) {
	var (
		pk, ended    int64
		doc          string
		s            game.GameSession
		status, name string
		maxP, cur    int
		policy       string
	)
	if err := sc.Scan(&pk, &doc, &status, &name, &maxP, &cur, &policy, &ended); err != nil {
		return 0, nil, err
	}
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return 0, nil, err
	}
	s.Status, s.Name, s.MaximumPlayerSessionCount, s.CurrentPlayerSessionCount = status, name, maxP, cur
	s.PlayerSessionCreationPolicy, s.TerminationTime = policy, store.FromMillis(ended)
	return pk, &s, nil
}

func (t *Tx) InsertGameSession(s *game.GameSession) error {
	if err := t.fence(s.FleetID); err != nil {
		return err
	}
	doc, err := encodeSession(s)
	if err != nil {
		return err
	}
	var pk int64
	if t.conn != nil {
		// Grouped on PostgreSQL: the key taken ahead, the insert queued.
		if pk, err = t.nextSessionKey(); err != nil {
			return err
		}
		err = t.later(func(_ int64, err error) error {
			if t.isUnique(err) {
				return game.Errorf(game.Conflict, "fleet %s already has a game session with id %s", s.FleetID, s.IDString)
			}
			return err
		}, `INSERT INTO game_sessions
		(pk, id, fleet_id, id_string, location, compute, status, name, max_players, cur_players, policy, creator_id, created, ended, doc, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
			pk, s.ID, s.FleetID, s.IDString, s.Location, s.ComputeName, s.Status, s.Name, s.MaximumPlayerSessionCount,
			s.CurrentPlayerSessionCount, s.PlayerSessionCreationPolicy, s.CreatorID, store.Millis(s.CreationTime),
			store.Millis(s.TerminationTime), string(doc))
		return t.insertedSession(s, pk, err)
	}
	err = t.queryRow(`INSERT INTO game_sessions
		(id, fleet_id, id_string, location, compute, status, name, max_players, cur_players, policy, creator_id, created, ended, doc, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING pk`,
		s.ID, s.FleetID, s.IDString, s.Location, s.ComputeName, s.Status, s.Name, s.MaximumPlayerSessionCount,
		s.CurrentPlayerSessionCount, s.PlayerSessionCreationPolicy, s.CreatorID, store.Millis(s.CreationTime),
		store.Millis(s.TerminationTime), string(doc)).Scan(&pk)
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "fleet %s already has a game session with id %s", s.FleetID, s.IDString)
	}
	return t.insertedSession(s, pk, err)
}

// insertedSession indexes the properties of session s, just inserted
// with row key pk (unless err), and notes it.
func (t *Tx) insertedSession(s *game.GameSession, pk int64, err error) error {
	if err != nil {
		return err
	}
	if err := t.insertProperties(pk, s.Properties); err != nil {
		return err
	}
	t.sawProperties(s)
	t.noteSession(s, pk, s.CurrentPlayerSessionCount, 1)
	return nil
}

// putProperties replaces the searchable properties of session pk. Keys
// containing '.' are kept in the record but, as in GameLift, not indexed
// for search.
func (t *Tx) putProperties(pk int64, props []game.Property) error {
	if err := t.later(nil, `DELETE FROM game_session_properties WHERE session_pk = ?`, pk); err != nil {
		return err
	}
	return t.insertProperties(pk, props)
}

// insertProperties indexes the searchable properties of session pk,
// which has none indexed yet.
func (t *Tx) insertProperties(pk int64, props []game.Property) error {
	for _, p := range props {
		if !game.Searchable(p.Key) {
			continue
		}
		if err := t.later(nil, `INSERT INTO game_session_properties (session_pk, key, value) VALUES (?, ?, ?)
			ON CONFLICT (session_pk, key) DO UPDATE SET value = excluded.value`, pk, p.Key, p.Value); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) GetGameSession(id string) (*game.GameSession, error) {
	if s, ok := t.memorySession(id); ok {
		return s, nil
	}
	_, s, err := scanSession(t.queryRow(`SELECT `+sessionColumns+` FROM game_sessions WHERE id = ?`+t.lock(), id))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "game session %s not found", id)
	}
	if err == nil {
		t.sawProperties(s)
	}
	return s, err
}

// sawProperties remembers, in a write transaction, the properties of
// session s as the store now indexes them, so that an update that leaves
// them as they are does not index them again. The record read inside a
// write transaction is locked, so they stay so until the transaction
// writes them; a job of a batch undone to its savepoint forgets them all.
func (t *Tx) sawProperties(s *game.GameSession) {
	if !t.writable {
		return
	}
	if t.props == nil {
		t.props = map[string]string{}
	}
	t.props[s.ID] = propertiesKey(s.Properties)
}

// propertiesKey is what putProperties indexes of props, as one string:
// equal keys index the same rows. An empty list has a key of its own, so
// that a session never seen does not match it.
func propertiesKey(props []game.Property) string {
	var b strings.Builder
	b.WriteByte(0)
	for _, p := range props {
		if game.Searchable(p.Key) {
			b.WriteString(p.Key)
			b.WriteByte(0)
			b.WriteString(p.Value)
			b.WriteByte(0)
		}
	}
	return b.String()
}

func (t *Tx) FindGameSession(fleetID, idString string) (*game.GameSession, error) {
	_, s, err := scanSession(t.queryRow(`SELECT `+sessionColumns+` FROM game_sessions
		WHERE fleet_id = ? AND id_string = ?`+t.lock(), fleetID, idString))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "fleet %s has no game session with id %s", fleetID, idString)
	}
	if err == nil {
		t.sawProperties(s)
	}
	return s, err
}

func (t *Tx) UpdateGameSession(s *game.GameSession) error {
	if err := t.fence(s.FleetID); err != nil {
		return err
	}
	doc, err := encodeSession(s)
	if err != nil {
		return err
	}
	if k := t.known[s.ID]; k != nil {
		return t.updateKnown(s, k, doc)
	}
	var pk, version int64
	var cur int
	err = t.queryRow(`UPDATE game_sessions SET compute = ?, status = ?, name = ?, max_players = ?, policy = ?,
		ended = ?, reason = ?, doc = ?, version = version + 1 WHERE id = ? RETURNING pk, cur_players, version`,
		s.ComputeName, s.Status, s.Name, s.MaximumPlayerSessionCount, s.PlayerSessionCreationPolicy,
		store.Millis(s.TerminationTime), s.StatusReason, string(doc), s.ID).Scan(&pk, &cur, &version)
	if errNoRows(err) {
		return game.Errorf(game.NotFound, "game session %s not found", s.ID)
	}
	if err != nil {
		return err
	}
	if t.props[s.ID] != propertiesKey(s.Properties) {
		// Most updates (a status, a seat policy) leave the properties as
		// this transaction read them: their index is left alone.
		if err := t.putProperties(pk, s.Properties); err != nil {
			return err
		}
		t.sawProperties(s)
	}
	t.noteSession(s, pk, cur, version)
	return nil
}

// sessionCursor is the position after the last session of a page; its
// format is shared with the live state in memory (store.SessionCursor).
type sessionCursor = store.SessionCursor

func (t *Tx) ListGameSessions(f store.SessionFilter, p store.Page) ([]*game.GameSession, string, error) {
	var cur sessionCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	q := `SELECT ` + sessionColumns + `, created FROM game_sessions WHERE `
	var args []any
	if f.ID != "" {
		q += `id = ?`
		args = append(args, f.ID)
	} else {
		q += `fleet_id = ?`
		args = append(args, f.FleetID)
	}
	if f.Location != "" {
		q += ` AND location = ?`
		args = append(args, f.Location)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if p.Token != "" {
		q += ` AND (created > ? OR (created = ? AND pk > ?))`
		args = append(args, cur.C, cur.C, cur.PK)
	}
	q += ` ORDER BY created, pk LIMIT ?`
	args = append(args, n+1)
	list, last, err := t.sessionRows(q, args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(list) > n {
		list = list[:n]
		next = encodeCursor(last[n-1])
	}
	return list, next, nil
}

// sessionRows runs a query selecting sessionColumns and created, and
// answers the sessions with the cursor of each.
func (t *Tx) sessionRows(q string, args ...any) ([]*game.GameSession, []sessionCursor, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		list []*game.GameSession
		curs []sessionCursor
	)
	for rows.Next() {
		var c sessionCursor
		pk, s, err := scanSession(scanPlus{rows, &c.C})
		if err != nil {
			return nil, nil, err
		}
		c.PK = pk
		list = append(list, s)
		curs = append(curs, c)
	}
	return list, curs, rows.Err()
}

// scanPlus scans a row that has extra columns after those a scan function
// expects into extra.
type scanPlus struct {
	sc    interface{ Scan(...any) error }
	extra *int64
}

func (s scanPlus) Scan(dest ...any) error { return s.sc.Scan(append(dest, s.extra)...) }

func (t *Tx) LiveGameSessions(fleetID, computeName string) ([]*game.GameSession, error) {
	q := `SELECT ` + sessionColumns + `, created FROM game_sessions
		WHERE fleet_id = ? AND status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')`
	args := []any{fleetID}
	if computeName != "" {
		q += ` AND compute = ?`
		args = append(args, computeName)
	}
	list, _, err := t.sessionRows(q+` ORDER BY created, pk`+t.lock(), args...)
	return list, err
}

func (t *Tx) BusyComputes(fleetID string) (map[string]bool, error) {
	rows, err := t.query(`SELECT DISTINCT compute FROM game_sessions
		WHERE fleet_id = ? AND status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING') AND compute <> ''`, fleetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

func (t *Tx) CountCreatorSessions(fleetID, creatorID string, since time.Time) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM game_sessions WHERE fleet_id = ? AND creator_id = ? AND creator_id <> '' AND created >= ?`,
		fleetID, creatorID, store.Millis(since)).Scan(&n)
	return n, err
}

func (t *Tx) FleetUsage(fleetID string) ([]store.LocationUsage, error) {
	rows, err := t.query(`SELECT location,
		SUM(CASE WHEN status = 'ACTIVE' THEN 1 ELSE 0 END),
		COUNT(*),
		SUM(cur_players),
		SUM(CASE WHEN status = 'ACTIVE' THEN max_players ELSE 0 END),
		COUNT(DISTINCT CASE WHEN compute <> '' THEN compute END)
		FROM game_sessions WHERE fleet_id = ? AND status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING')
		GROUP BY location ORDER BY location`, fleetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LocationUsage
	for rows.Next() {
		var u store.LocationUsage
		if err := rows.Scan(&u.Location, &u.ActiveGameSessions, &u.LiveGameSessions, &u.CurrentPlayers,
			&u.MaximumPlayers, &u.BusyComputes); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func (t *Tx) ActivatingSince(before time.Time, max int) ([]*game.GameSession, error) {
	owned, ownedArgs := t.ownedOnly("fleet_id")
	list, _, err := t.sessionRows(`SELECT `+sessionColumns+`, created FROM game_sessions
		WHERE status = 'ACTIVATING' AND created <= ?`+owned+` ORDER BY created, pk LIMIT ?`,
		append(append([]any{store.Millis(before)}, ownedArgs...), max)...)
	return list, err
}
