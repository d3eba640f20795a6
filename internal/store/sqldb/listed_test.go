package sqldb_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// The placer places the placements its job listed without reading each
// again under its row lock (placed.go): the write is guarded on what the
// list read. A placement that another transaction stopped, failed with
// its queue, or placed between the list and the write is not written,
// and nothing the job wrote for it (the game session) stays.
//
// On PostgreSQL the other transaction is another connection's, committed
// while the placer's job runs; the placer's batch runs again, lists
// again, and places only what is still to be placed. On SQLite nothing
// else can write while the job runs (it holds the write lock from its
// list on), so the other writer's statement is run inside the job, at
// every attempt: the guard still refuses the write, and the job fails
// whole, having written nothing.
func TestListedPlacementChangedBeforeItsWriteIsNotPlaced(t *testing.T) {
	changes := map[string]func(p *game.Placement){
		"stopped": func(p *game.Placement) { p.Status, p.EndTime = game.PlacementCancelled, time.Now() },
		"queue deleted": func(p *game.Placement) {
			p.Status, p.EndTime = game.PlacementFailed, time.Now()
		},
		"placed elsewhere": func(p *game.Placement) {
			p.GameSessionID, p.GameSessionRegion, p.FleetID = "arn:aws:gamelift:us-west-2::gamesession/fleet-2/custom-a/gsess-other", "custom-a", "fleet-2"
		},
	}
	for name, open := range memWorlds(t) {
		for change, apply := range changes {
			t.Run(name+"/"+change, func(t *testing.T) {
				w := open(t)
				pl1, pl2 := testPlacement("pl-1"), testPlacement("pl-2")
				pl2.StartTime = pl1.StartTime.Add(time.Millisecond)
				w.update(func(tx store.Tx) error {
					if err := tx.InsertQueue(&game.Queue{Name: "q", ARN: "arn:q", TimeoutSeconds: 60}); err != nil {
						return err
					}
					if err := tx.InsertPlacement(pl1); err != nil {
						return err
					}
					return tx.InsertPlacement(pl2)
				})
				var changed game.Placement
				attempts := 0
				err := w.db.Update(context.Background(), func(tx store.Tx) error {
					attempts++
					list, err := tx.ListPendingPlacements(store.PendingQuery{Unplaced: true}, 10)
					if err != nil {
						return err
					}
					// The queue the list brought along (PostgreSQL) is
					// the queue as stored.
					if q, err := tx.GetQueue("q"); err != nil || q.ARN != "arn:q" || q.TimeoutSeconds != 60 {
						t.Errorf("the listed placements' queue read %+v, %v", q, err)
					}
					if attempts == 1 || name == "sqlite" {
						if len(list) != 2 || list[0].ID != "pl-1" {
							t.Errorf("attempt %d listed %d placements", attempts, len(list))
							return nil
						}
						changed = *list[0]
						apply(&changed)
						if err := w.changeListed(tx, &changed); err != nil {
							return err
						}
					}
					for _, p := range list {
						if err := w.placeListed(tx, p); err != nil {
							return err
						}
					}
					return nil
				})

				s1, s2 := w.storedPlacement("pl-1"), w.storedPlacement("pl-2")
				if name == "sqlite" {
					if !errors.Is(err, sqldb.ErrPlacementMoved) {
						t.Fatalf("the job ended with %v, want the placement moved", err)
					}
					// Undone whole, the other writer's statement with it.
					for _, s := range []*game.Placement{s1, s2} {
						if s.Status != game.PlacementPending || s.GameSessionID != "" {
							t.Fatalf("%s stored %s on %q, want PENDING, unplaced", s.ID, s.Status, s.GameSessionID)
						}
					}
					w.noSession("pl-1")
					w.noSession("pl-2")
					return
				}
				if err != nil || attempts != 2 {
					t.Fatalf("the job ended with %v after %d attempts, want success after 2", err, attempts)
				}
				if s1.Status != changed.Status || s1.GameSessionID != changed.GameSessionID {
					t.Fatalf("pl-1 stored %s on %q, want %s on %q as the other writer left it", s1.Status, s1.GameSessionID, changed.Status, changed.GameSessionID)
				}
				w.noSession("pl-1")
				if s2.Status != game.PlacementPending || s2.GameSessionID != sessionOfListed("pl-2") {
					t.Fatalf("pl-2 stored %s on %q, want placed", s2.Status, s2.GameSessionID)
				}
				w.stored(sessionOfListed("pl-2"))
			})
		}
	}
}

func sessionOfListed(id string) string {
	return "arn:aws:gamelift:us-west-2::gamesession/" + testFleet + "/custom-a/gsess-" + id
}

// placeListed writes what the placer writes to place p: a new ACTIVATING
// session, and p with it.
func (w *memWorld) placeListed(tx store.Tx, p *game.Placement) error {
	id := sessionOfListed(p.ID)
	gs := &game.GameSession{ID: id, IDString: id[strings.LastIndex(id, "/")+1:], FleetID: testFleet, Location: "custom-a",
		CreationTime: time.Now(), MaximumPlayerSessionCount: 4, Status: game.SessionActivating, PlayerSessionCreationPolicy: game.AcceptAll}
	if err := tx.InsertGameSession(gs); err != nil {
		return err
	}
	p.GameSessionID, p.GameSessionRegion, p.FleetID = id, "custom-a", testFleet
	return tx.UpdatePlacement(p)
}

// changeListed writes p's row as another writer would, while tx runs:
// from another connection on PostgreSQL, inside tx on SQLite (see above).
func (w *memWorld) changeListed(tx store.Tx, p *game.Placement) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if w.db.Dialect() == "postgres" {
		_, err = w.raw.Exec(`UPDATE placements SET status = $1, game_session_id = $2, doc = $3 WHERE id = $4`,
			p.Status, p.GameSessionID, string(doc), p.ID)
		return err
	}
	return sqldb.ExecInTx(tx, `UPDATE placements SET status = ?, game_session_id = ?, doc = ? WHERE id = ?`,
		p.Status, p.GameSessionID, string(doc), p.ID)
}

// noSession fails if the session placing id would have is stored.
func (w *memWorld) noSession(id string) {
	w.t.Helper()
	var n int
	if err := w.raw.QueryRow(rebind(w.db, `SELECT COUNT(*) FROM game_sessions WHERE id = ?`), sessionOfListed(id)).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	if n != 0 {
		w.t.Fatalf("the session placing %s is stored", id)
	}
}
