package sqldb

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Rule set ARNs are not stored: the caller's Account derives them. The
// store keeps name, creation time and body.

func (t *Tx) InsertRuleSet(rs *game.MatchmakingRuleSet) error {
	_, err := t.exec(`INSERT INTO matchmaking_rule_sets (name, created, body) VALUES (?, ?, ?)`,
		rs.Name, store.Millis(rs.CreationTime), rs.Body)
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "matchmaking rule set %s already exists", rs.Name)
	}
	return err
}

func (t *Tx) GetRuleSet(name string) (*game.MatchmakingRuleSet, error) {
	rs := &game.MatchmakingRuleSet{Name: name}
	var created int64
	err := t.queryRow(`SELECT created, body FROM matchmaking_rule_sets WHERE name = ?`+t.lockShared(), name).Scan(&created, &rs.Body)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "matchmaking rule set %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	rs.CreationTime = store.FromMillis(created)
	return rs, nil
}

func (t *Tx) DeleteRuleSet(name string) error {
	res, err := t.exec(`DELETE FROM matchmaking_rule_sets WHERE name = ?`, name)
	return requireRow(res, err, "matchmaking rule set %s not found", name)
}

func (t *Tx) CountRuleSets() (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM matchmaking_rule_sets`).Scan(&n)
	return n, err
}

func (t *Tx) ListRuleSets(p store.Page) ([]*game.MatchmakingRuleSet, string, error) {
	var cur createdCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 10, 1000)
	rows, err := t.query(`SELECT name, created, body FROM matchmaking_rule_sets
		WHERE created > ? OR (created = ? AND name > ?) ORDER BY created, name LIMIT ?`,
		cur.Created, cur.Created, cur.ID, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.MatchmakingRuleSet
	for rows.Next() {
		rs := &game.MatchmakingRuleSet{}
		var created int64
		if err := rows.Scan(&rs.Name, &created, &rs.Body); err != nil {
			return nil, "", err
		}
		rs.CreationTime = store.FromMillis(created)
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
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
