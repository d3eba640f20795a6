package sqldb

import (
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
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var pk int64
	err = t.queryRow(`INSERT INTO game_sessions
		(id, fleet_id, id_string, location, compute, status, name, max_players, cur_players, policy, creator_id, created, ended, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
		s.ID, s.FleetID, s.IDString, s.Location, s.ComputeName, s.Status, s.Name, s.MaximumPlayerSessionCount,
		s.CurrentPlayerSessionCount, s.PlayerSessionCreationPolicy, s.CreatorID, store.Millis(s.CreationTime),
		store.Millis(s.TerminationTime), string(doc)).Scan(&pk)
	if t.isUnique(err) {
		return game.Errorf(game.Conflict, "fleet %s already has a game session with id %s", s.FleetID, s.IDString)
	}
	if err != nil {
		return err
	}
	return t.putProperties(pk, s.Properties)
}

// putProperties replaces the searchable properties of session pk. Keys
// containing '.' are kept in the record but, as in GameLift, not indexed
// for search (spec/semantics.md §2.1).
func (t *Tx) putProperties(pk int64, props []game.Property) error {
	if _, err := t.exec(`DELETE FROM game_session_properties WHERE session_pk = ?`, pk); err != nil {
		return err
	}
	for _, p := range props {
		if !game.Searchable(p.Key) {
			continue
		}
		if _, err := t.exec(`INSERT INTO game_session_properties (session_pk, key, value) VALUES (?, ?, ?)
			ON CONFLICT (session_pk, key) DO UPDATE SET value = excluded.value`, pk, p.Key, p.Value); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) GetGameSession(id string) (*game.GameSession, error) {
	_, s, err := scanSession(t.queryRow(`SELECT `+sessionColumns+` FROM game_sessions WHERE id = ?`+t.lock(), id))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "game session %s not found", id)
	}
	return s, err
}
