package sqldb

import "github.com/anylift/anylift/internal/game"

func (t *Tx) PutTags(arn string, tags []game.Tag) error {
	for _, tag := range tags {
		_, err := t.exec(`INSERT INTO tags (arn, key, value) VALUES (?, ?, ?)
			ON CONFLICT (arn, key) DO UPDATE SET value = excluded.value`, arn, tag.Key, tag.Value)
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) DeleteTags(arn string, keys []string) error {
	for _, k := range keys {
		if _, err := t.exec(`DELETE FROM tags WHERE arn = ? AND key = ?`, arn, k); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) DeleteAllTags(arn string) error {
	_, err := t.exec(`DELETE FROM tags WHERE arn = ?`, arn)
	return err
}

func (t *Tx) ListTags(arn string) ([]game.Tag, error) {
	rows, err := t.query(`SELECT key, value FROM tags WHERE arn = ? ORDER BY key`, arn)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []game.Tag
	for rows.Next() {
		var tag game.Tag
		if err := rows.Scan(&tag.Key, &tag.Value); err != nil {
			return nil, err
		}
		out = append(out, tag)
	}
	return out, rows.Err()
}
