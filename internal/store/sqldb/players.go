package sqldb

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Player sessions live in player_sessions: the record as JSON in doc, and
// as columns what is queried or changed in bulk (status, ended). Columns
// win over doc on read. Every change of a seat (entering or leaving
// RESERVED/ACTIVE) changes game_sessions.cur_players in the same
// transaction.

const playerColumns = `doc, status, ended`

func scanPlayer(sc interface{ Scan(...any) error }) (*game.PlayerSession, error) {
	var (
		doc, status string
		ended       int64
		p           game.PlayerSession
	)
	if err := sc.Scan(&doc, &status, &ended); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, err
	}
	p.Status, p.TerminationTime = status, store.FromMillis(ended)
	return &p, nil
}

func (t *Tx) ReserveSeats(gameSessionID string, ps []*game.PlayerSession, expireBefore time.Time) error {
	if len(ps) == 0 {
		return nil
	}
	if err := t.fenceSession(gameSessionID); err != nil {
		return err
	}
	s, version, err := t.takeSeats(gameSessionID, len(ps))
	if errNoRows(err) {
		// No room as counted: reservations past their timeout may hold
		// seats the timer has not freed yet. Free them, then count again.
		n, xerr := t.expireSession(gameSessionID, expireBefore, ps[0].CreationTime)
		if xerr != nil {
			return xerr
		}
		if n > 0 {
			s, version, err = t.takeSeats(gameSessionID, len(ps))
		}
	}
	if errNoRows(err) {
		if s, err = t.GetGameSession(gameSessionID); err != nil {
			return err
		}
		return store.SeatRefusal(s, len(ps))
	}
	if err != nil {
		return err
	}
	t.note(store.Change{Kind: store.SessionSeats, ID: s.ID, Seats: s.CurrentPlayerSessionCount, Version: version})
	for _, p := range ps {
		p.GameSessionID, p.FleetID, p.FleetARN = s.ID, s.FleetID, s.FleetARN
		p.IPAddress, p.DNSName, p.Port = s.IPAddress, s.DNSName, s.Port
		if err := t.insertPlayer(p); err != nil {
			return err
		}
	}
	return nil
}

// takeSeats raises the seat count of a game session that is ACTIVE,
// accepts players and has n free seats, and answers it as it now is and
// its row version; sql.ErrNoRows when it is not so.
func (t *Tx) takeSeats(gameSessionID string, n int) (*game.GameSession, int64, error) {
	if s, version, ok, err := t.takeKnownSeats(gameSessionID, n); ok || err != nil {
		return s, version, err
	}
	var version int64
	_, s, err := scanSession(versionFirst{t.queryRow(`UPDATE game_sessions SET cur_players = cur_players + ?, version = version + 1
		WHERE id = ? AND status = 'ACTIVE' AND policy = 'ACCEPT_ALL' AND cur_players + ? <= max_players
		RETURNING version, `+sessionColumns, n, gameSessionID, n), &version})
	if err == nil {
		t.sawProperties(s)
	}
	return s, version, err
}

// versionFirst scans a row whose first column is a row version into
// version, and the rest as asked.
type versionFirst struct {
	row     Row
	version *int64
}

func (v versionFirst) Scan(dest ...any) error {
	return v.row.Scan(append([]any{v.version}, dest...)...)
}

func (t *Tx) insertPlayer(p *game.PlayerSession) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return t.later(func(_ int64, err error) error {
		if t.isUnique(err) {
			return game.Errorf(game.Conflict, "player session %s already exists", p.ID)
		}
		return err
	}, `INSERT INTO player_sessions (id, game_session_id, player_id, status, created, ended, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, p.ID, p.GameSessionID, p.PlayerID, p.Status, store.Millis(p.CreationTime),
		store.Millis(p.TerminationTime), string(doc))
}

// expireSession times out the game session's reservations created at or
// before cutoff and frees their seats.
func (t *Tx) expireSession(gameSessionID string, cutoff, at time.Time) (int, error) {
	res, err := t.exec(`UPDATE player_sessions SET status = 'TIMEDOUT', ended = ?
		WHERE game_session_id = ? AND status = 'RESERVED' AND created <= ?`,
		store.Millis(at), gameSessionID, store.Millis(cutoff))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, err
	}
	return int(n), t.freeSeats(gameSessionID, int(n))
}

// freeSeats gives n seats of a game session back.
func (t *Tx) freeSeats(gameSessionID string, n int) error {
	if err := t.fenceSession(gameSessionID); err != nil {
		return err
	}
	var cur int
	var version int64
	err := t.queryRow(`UPDATE game_sessions SET cur_players = cur_players - ?, version = version + 1 WHERE id = ?
		RETURNING cur_players, version`, n, gameSessionID).Scan(&cur, &version)
	if errNoRows(err) {
		return nil
	}
	if err == nil {
		t.note(store.Change{Kind: store.SessionSeats, ID: gameSessionID, Seats: cur, Version: version})
	}
	return err
}

func (t *Tx) GetPlayerSession(id string) (*game.PlayerSession, error) {
	p, err := scanPlayer(t.queryRow(`SELECT `+playerColumns+` FROM player_sessions WHERE id = ?`+t.lock(), id))
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "player session %s not found", id)
	}
	if err == nil && t.writable {
		t.lastPlayer.rec, t.lastPlayer.sent, t.lastPlayer.ok = *p, t.sent, true
	}
	return p, err
}

// playerForWrite returns player session id for a change: the record the
// running job has just read, when no statement has run since (an accept
// or a removal checks the record, then changes it), else read again.
func (t *Tx) playerForWrite(id string) (*game.PlayerSession, error) {
	if l := &t.lastPlayer; l.ok && l.sent == t.sent && l.rec.ID == id {
		p := l.rec
		return &p, nil
	}
	return t.GetPlayerSession(id)
}

// playerCursor is the position after the last player session of a page.
type playerCursor struct {
	C  int64  `json:"c"`
	ID string `json:"i"`
}

func (t *Tx) ListPlayerSessions(f store.PlayerFilter, p store.Page) ([]*game.PlayerSession, string, error) {
	var cur playerCursor
	if err := decodeCursor(p.Token, &cur); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 100, 1000)
	q := `SELECT ` + playerColumns + `, created FROM player_sessions WHERE `
	var args []any
	switch {
	case f.ID != "":
		q += `id = ?`
		args = append(args, f.ID)
	case f.GameSessionID != "":
		q += `game_session_id = ?`
		args = append(args, f.GameSessionID)
		if f.Status != "" {
			q += ` AND status = ?`
			args = append(args, f.Status)
		}
	default:
		q += `player_id = ?`
		args = append(args, f.PlayerID)
	}
	if p.Token != "" {
		q += ` AND (created > ? OR (created = ? AND id > ?))`
		args = append(args, cur.C, cur.C, cur.ID)
	}
	q += ` ORDER BY created, id LIMIT ?`
	args = append(args, n+1)
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.PlayerSession
	for rows.Next() {
		var created int64
		ps, err := scanPlayer(scanPlus{rows, &created})
		if err != nil {
			return nil, "", err
		}
		out = append(out, ps)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = encodeCursor(playerCursor{C: store.Millis(out[n-1].CreationTime), ID: out[n-1].ID})
	}
	return out, next, nil
}

func (t *Tx) SetPlayerSessionStatus(id, status string, at time.Time) (*game.PlayerSession, error) {
	p, err := t.playerForWrite(id)
	if err != nil {
		return nil, err
	}
	held := p.Occupies()
	p.Status = status
	if !p.Occupies() {
		p.TerminationTime = at
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	activated := int64(0) // when it first takes its seat (metrics)
	if status == game.PlayerActive {
		activated = store.Millis(at)
	}
	if _, err := t.exec(`UPDATE player_sessions SET status = ?, ended = ?, doc = ?,
		activated = CASE WHEN activated = 0 THEN ? ELSE activated END WHERE id = ?`,
		p.Status, store.Millis(p.TerminationTime), string(doc), activated, id); err != nil {
		return nil, err
	}
	switch {
	case held && !p.Occupies():
		err = t.freeSeats(p.GameSessionID, 1)
	case !held && p.Occupies():
		err = t.freeSeats(p.GameSessionID, -1)
	}
	return p, err
}

func (t *Tx) ExpireReservations(cutoff, at time.Time, max int) (int, error) {
	owned, ownedArgs := t.ownedOnly(sessionFleet)
	rows, err := t.query(`UPDATE player_sessions SET status = 'TIMEDOUT', ended = ?
		WHERE id IN (SELECT id FROM player_sessions WHERE status = 'RESERVED' AND created <= ?`+owned+` ORDER BY created LIMIT ?)
		AND status = 'RESERVED'
		RETURNING game_session_id`, append(append([]any{store.Millis(at), store.Millis(cutoff)}, ownedArgs...), max)...)
	if err != nil {
		return 0, err
	}
	freed := map[string]int{}
	total := 0
	for rows.Next() {
		var gs string
		if err := rows.Scan(&gs); err != nil {
			rows.Close()
			return 0, err
		}
		freed[gs]++
		total++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	ids := make([]string, 0, len(freed))
	for id := range freed {
		ids = append(ids, id)
	}
	sort.Strings(ids) // one lock order for every node
	for _, id := range ids {
		if err := t.freeSeats(id, freed[id]); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func (t *Tx) EndPlayerSessions(gameSessionID string, at time.Time) error {
	res, err := t.exec(`UPDATE player_sessions SET status = 'COMPLETED', ended = ?
		WHERE game_session_id = ? AND status IN ('RESERVED', 'ACTIVE')`, store.Millis(at), gameSessionID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return err
	}
	return t.freeSeats(gameSessionID, int(n))
}
