package sqldb

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Matchmaking configurations, tickets and matches keep the whole record
// as JSON in doc, with what is queried (rule set, status, times) as
// columns. A ticket's players are indexed in matchmaking_ticket_players
// so a new request can cancel the player's older tickets.

func (t *Tx) InsertMatchConfig(c *game.MatchmakingConfiguration) error {
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO matchmaking_configurations (name, created, rule_set, doc) VALUES (?, ?, ?, ?)`,
		c.Name, store.Millis(c.CreationTime), c.RuleSetName, string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "matchmaking configuration %s already exists", c.Name)
	}
	return err
}

func (t *Tx) GetMatchConfig(name string) (*game.MatchmakingConfiguration, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM matchmaking_configurations WHERE name = ?`+t.lockShared(), name).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "matchmaking configuration %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	var c game.MatchmakingConfiguration
	return &c, json.Unmarshal([]byte(doc), &c)
}

func (t *Tx) UpdateMatchConfig(c *game.MatchmakingConfiguration) error {
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	res, err := t.exec(`UPDATE matchmaking_configurations SET rule_set = ?, doc = ? WHERE name = ?`, c.RuleSetName, string(doc), c.Name)
	return requireRow(res, err, "matchmaking configuration %s not found", c.Name)
}

func (t *Tx) DeleteMatchConfig(name string) error {
	res, err := t.exec(`DELETE FROM matchmaking_configurations WHERE name = ?`, name)
	return requireRow(res, err, "matchmaking configuration %s not found", name)
}

func (t *Tx) CountMatchConfigs() (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM matchmaking_configurations`).Scan(&n)
	return n, err
}

func (t *Tx) ListMatchConfigs(ruleSet string, p store.Page) ([]*game.MatchmakingConfiguration, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 10, 1000)
	rows, err := t.query(`SELECT doc FROM matchmaking_configurations
		WHERE (created > ? OR (created = ? AND name > ?)) AND (? = '' OR rule_set = ?) ORDER BY created, name LIMIT ?`,
		cur.Created, cur.Created, cur.ID, ruleSet, ruleSet, n+1)
	out, err := scanDocs[game.MatchmakingConfiguration](rows, err)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		last := out[n-1]
		next = encodeCursor(createdCursor{store.Millis(last.CreationTime), last.Name})
	}
	return out, next, nil
}

// scanDocs decodes the single doc column of every row.
func scanDocs[T any](rows *sql.Rows, err error) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		v := new(T)
		if err := json.Unmarshal([]byte(doc), v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (t *Tx) InsertTicket(tk *game.MatchTicket) error {
	doc, err := json.Marshal(tk)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO matchmaking_tickets (id, config, status, started, deadline, ended, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		tk.ID, tk.ConfigName, tk.Status, store.Millis(tk.StartTime), store.Millis(tk.Deadline), store.Millis(tk.EndTime), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "matchmaking ticket %s already exists", tk.ID)
	}
	if err != nil {
		return err
	}
	for _, p := range tk.Players {
		if _, err := t.exec(`INSERT INTO matchmaking_ticket_players (player_id, ticket_id) VALUES (?, ?)`, p.ID, tk.ID); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) GetTicket(id string) (*game.MatchTicket, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM matchmaking_tickets WHERE id = ?`+t.lock(), id).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "matchmaking ticket %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	var tk game.MatchTicket
	return &tk, json.Unmarshal([]byte(doc), &tk)
}

func (t *Tx) UpdateTicket(tk *game.MatchTicket) error {
	doc, err := json.Marshal(tk)
	if err != nil {
		return err
	}
	res, err := t.exec(`UPDATE matchmaking_tickets SET status = ?, deadline = ?, ended = ?, doc = ? WHERE id = ?`,
		tk.Status, store.Millis(tk.Deadline), store.Millis(tk.EndTime), string(doc), tk.ID)
	return requireRow(res, err, "matchmaking ticket %s not found", tk.ID)
}

func (t *Tx) ListTickets(config, status, after string, limit int) ([]*game.MatchTicket, error) {
	var started int64
	if after != "" {
		err := t.queryRow(`SELECT started FROM matchmaking_tickets WHERE id = ?`, after).Scan(&started)
		if err != nil && !errNoRows(err) {
			return nil, err
		}
	}
	rows, err := t.query(`SELECT doc FROM matchmaking_tickets WHERE config = ? AND status = ?
		AND (started > ? OR (started = ? AND id > ?)) ORDER BY started, id LIMIT ?`,
		config, status, started, started, after, limit)
	return scanDocs[game.MatchTicket](rows, err)
}

func (t *Tx) ListDueTickets(config, status string, now time.Time, limit int) ([]*game.MatchTicket, error) {
	rows, err := t.query(`SELECT doc FROM matchmaking_tickets WHERE config = ? AND status = ? AND deadline <= ?
		ORDER BY deadline, id LIMIT ?`, config, status, store.Millis(now), limit)
	return scanDocs[game.MatchTicket](rows, err)
}

func (t *Tx) CountActiveTickets(config string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM matchmaking_tickets WHERE config = ?
		AND status IN ('QUEUED', 'SEARCHING', 'REQUIRES_ACCEPTANCE', 'PLACING')`, config).Scan(&n)
	return n, err
}

func (t *Tx) ActiveTicketsOfPlayer(playerID string) ([]*game.MatchTicket, error) {
	rows, err := t.query(`SELECT k.doc FROM matchmaking_ticket_players p JOIN matchmaking_tickets k ON k.id = p.ticket_id
		WHERE p.player_id = ? AND k.status IN ('QUEUED', 'SEARCHING', 'REQUIRES_ACCEPTANCE', 'PLACING') ORDER BY k.id`, playerID)
	return scanDocs[game.MatchTicket](rows, err)
}

func (t *Tx) InsertMatch(m *game.Match) error {
	doc, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO matchmaking_matches (id, config, status, deadline, doc) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.ConfigName, m.Status, store.Millis(m.AcceptDeadline), string(doc))
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "match %s already exists", m.ID)
	}
	return err
}

func (t *Tx) GetMatch(id string) (*game.Match, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM matchmaking_matches WHERE id = ?`+t.lock(), id).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "match %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	var m game.Match
	return &m, json.Unmarshal([]byte(doc), &m)
}

func (t *Tx) UpdateMatch(m *game.Match) error {
	doc, err := json.Marshal(m)
	if err != nil {
		return err
	}
	res, err := t.exec(`UPDATE matchmaking_matches SET status = ?, deadline = ?, doc = ? WHERE id = ?`,
		m.Status, store.Millis(m.AcceptDeadline), string(doc), m.ID)
	return requireRow(res, err, "match %s not found", m.ID)
}

func (t *Tx) ListDueAcceptances(config string, now time.Time, limit int) ([]*game.Match, error) {
	rows, err := t.query(`SELECT doc FROM matchmaking_matches WHERE config = ? AND status = 'ACCEPTANCE' AND deadline <= ?
		ORDER BY deadline, id LIMIT ?`, config, store.Millis(now), limit)
	return scanDocs[game.Match](rows, err)
}

func (t *Tx) LeaseMatchmaker(config, owner string, now, until time.Time) (bool, error) {
	res, err := t.exec(`UPDATE matchmaking_leases SET owner = ?, expires = ? WHERE config = ? AND (owner = ? OR expires <= ?)`,
		owner, store.Millis(until), config, owner, store.Millis(now))
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var cur string
	err = t.queryRow(`SELECT owner FROM matchmaking_leases WHERE config = ?`, config).Scan(&cur)
	if !errNoRows(err) {
		return false, err
	}
	_, err = t.exec(`INSERT INTO matchmaking_leases (config, owner, expires) VALUES (?, ?, ?)`, config, owner, store.Millis(until))
	if t.isUnique(err) {
		return false, nil
	}
	return err == nil, err
}

func (t *Tx) DeleteEndedTickets(before time.Time, limit int) (int, error) {
	rows, err := t.query(`SELECT id FROM matchmaking_tickets WHERE ended > 0 AND ended < ? ORDER BY ended LIMIT ?`, store.Millis(before), limit)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, err := t.exec(`DELETE FROM matchmaking_ticket_players WHERE ticket_id = ?`, id); err != nil {
			return 0, err
		}
		if _, err := t.exec(`DELETE FROM matchmaking_tickets WHERE id = ?`, id); err != nil {
			return 0, err
		}
	}
	_, err = t.exec(`DELETE FROM matchmaking_matches WHERE status = 'DONE' AND id IN (SELECT id FROM matchmaking_matches WHERE status = 'DONE' AND deadline < ? LIMIT ?)`,
		store.Millis(before), limit)
	return len(ids), err
}

func (t *Tx) RecentWaits(config string, limit int) ([]time.Duration, error) {
	rows, err := t.query(`SELECT started, ended FROM matchmaking_tickets WHERE config = ? AND status = 'COMPLETED'
		ORDER BY ended DESC LIMIT ?`, config, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var started, ended int64
		if err := rows.Scan(&started, &ended); err != nil {
			return nil, err
		}
		out = append(out, time.Duration(ended-started)*time.Millisecond)
	}
	return out, rows.Err()
}
