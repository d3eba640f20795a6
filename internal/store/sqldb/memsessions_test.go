package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// The tests here hold the game sessions that write transactions read
// from memory (memsessions.go) to the store, on SQLite and on PostgreSQL
// (grouped, pipelined): a read inside a write answers the memory's
// record; a session an earlier job of the same batch wrote is read as
// that job left it; a failed job leaves the store and the memory as they
// were; a write made from a memory that the store's row does not match
// fails and changes nothing; sessions inserted with keys taken ahead
// keep their keys in the memory and the store alike.

var errOnPurpose = errors.New("failed on purpose")

const testFleet = "fleet-1"

// memWorld is a store with group commit whose write transactions read
// processes and game sessions from memories its commits feed, as a
// server's (internal/server, loadLive and ownedMemory) do, and a second
// connection to its database that writes behind the memory's back.
type memWorld struct {
	t   *testing.T
	db  *sqldb.DB
	mem *live.Sessions
	raw *sql.DB
	n   int
}

func memWorlds(t *testing.T) map[string]func(t *testing.T) *memWorld {
	out := map[string]func(t *testing.T) *memWorld{
		"sqlite": func(t *testing.T) *memWorld {
			dir := t.TempDir()
			db, err := sqlite.Open(context.Background(), dir, sqlite.Options{Synchronous: "NORMAL"})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			return newMemWorld(t, db, raw)
		},
	}
	if dsn := storetestenv.PostgresDSN(t); dsn != "" {
		out["postgres"] = func(t *testing.T) *memWorld {
			schema := storetestenv.FreshSchema(t, dsn)
			db, err := postgres.Open(context.Background(), schema)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sql.Open("pgx", schema)
			if err != nil {
				t.Fatal(err)
			}
			return newMemWorld(t, db, raw)
		}
	}
	return out
}

func newMemWorld(t *testing.T, db *sqldb.DB, raw *sql.DB) *memWorld {
	t.Cleanup(func() { raw.Close(); db.Close() })
	if !db.Grouped() {
		db.EnableGroupCommit()
	}
	mem, procs := live.New(), fleetstate.New()
	db.SetCommitHook(func(c []store.Change) { mem.Apply(c); procs.Apply(c) })
	db.SetLiveProcesses(procs)
	db.SetLiveSessions(mem)
	w := &memWorld{t: t, db: db, mem: mem, raw: raw}
	w.update(func(tx store.Tx) error {
		return tx.InsertFleet(&game.Fleet{ID: testFleet, Status: game.FleetActive, CreationTime: time.Now(), Locations: []string{"custom-a"}})
	})
	return w
}

func (w *memWorld) update(fn func(store.Tx) error) {
	w.t.Helper()
	if err := w.db.Update(context.Background(), fn); err != nil {
		w.t.Fatal(err)
	}
}

// newSession inserts an ACTIVE session accepting players, with seats
// seats, and answers its id.
func (w *memWorld) newSession(seats int) string {
	w.n++
	idString := "gsess-" + strings.Repeat("x", w.n)
	gs := &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/" + testFleet + "/custom-a/" + idString,
		IDString: idString, FleetID: testFleet, Location: "custom-a", CreationTime: time.Now(),
		MaximumPlayerSessionCount: seats, Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll,
		Properties: []game.Property{{Key: "mode", Value: "duel"}}}
	w.update(func(tx store.Tx) error { return tx.InsertGameSession(gs) })
	return gs.ID
}

// stored answers the session as a read transaction reads it, with its
// row key and version.
func (w *memWorld) stored(id string) (*game.GameSession, int64, int64) {
	w.t.Helper()
	var gs *game.GameSession
	err := w.db.View(context.Background(), func(tx store.Tx) error {
		var err error
		gs, err = tx.GetGameSession(id)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	var pk, version int64
	if err := w.raw.QueryRow(rebind(w.db, `SELECT pk, version FROM game_sessions WHERE id = ?`), id).Scan(&pk, &version); err != nil {
		w.t.Fatal(err)
	}
	return gs, pk, version
}

func rebind(db *sqldb.DB, q string) string {
	if db.Dialect() == "postgres" {
		return strings.Replace(q, "?", "$1", 1)
	}
	return q
}

// agree fails unless the memory holds session id as the store does.
func (w *memWorld) agree(id string) *game.GameSession {
	w.t.Helper()
	want, pk, version := w.stored(id)
	got, gotPK, gotVersion, ok := w.mem.Record(id)
	if !ok {
		w.t.Fatalf("memory does not hold %s", id)
	}
	if !reflect.DeepEqual(got, want) || gotPK != pk || gotVersion != version {
		w.t.Fatalf("memory holds\n%+v (pk %d, version %d)\nthe store\n%+v (pk %d, version %d)", got, gotPK, gotVersion, want, pk, version)
	}
	return want
}

func reserve(tx store.Tx, id string, n int) error {
	var ps []*game.PlayerSession
	for i := range n {
		ps = append(ps, &game.PlayerSession{ID: "psess-" + id[len(id)-4:] + string(rune('a'+i)) + time.Now().Format("150405.000000000"),
			PlayerID: "p", Status: game.PlayerReserved, CreationTime: time.Now()})
	}
	return tx.ReserveSeats(id, ps, time.Now().Add(-time.Minute))
}

func TestSessionsFromMemoryInWrites(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("read as stored", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				want := w.agree(id)
				w.update(func(tx store.Tx) error {
					got, err := tx.GetGameSession(id)
					if err == nil && !reflect.DeepEqual(got, want) {
						t.Errorf("read in a write\n%+v\nthe store\n%+v", got, want)
					}
					return err
				})
				// Written from memory: the status, then seats, in one job.
				w.update(func(tx store.Tx) error {
					gs, err := tx.GetGameSession(id)
					if err != nil {
						return err
					}
					gs.Name = "renamed"
					if err := tx.UpdateGameSession(gs); err != nil {
						return err
					}
					return reserve(tx, id, 3)
				})
				gs := w.agree(id)
				if _, _, v := w.stored(id); gs.Name != "renamed" || gs.CurrentPlayerSessionCount != 3 || v != 3 {
					t.Errorf("after the write: name %q, %d seats, version %d; want renamed, 3, 3", gs.Name, gs.CurrentPlayerSessionCount, v)
				}
				// No room left as the memory counts: the store decides, and refuses.
				err := w.db.Update(context.Background(), func(tx store.Tx) error { return reserve(tx, id, 2) })
				if !game.IsKind(err, game.GameSessionFull) {
					t.Errorf("two seats of one left: %v, want GameSessionFull", err)
				}
				w.agree(id)
			})

			// An update from memory sets only the columns that changed:
			// those it leaves out keep what the row held, and those it
			// sets hold the new values, as the store's queries read them.
			t.Run("columns changed", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				w.agree(id)
				columns := func() [6]any {
					t.Helper()
					var name, status, compute, reason string
					var maxPlayers, ended int64
					err := w.raw.QueryRow(rebind(w.db, `SELECT name, status, compute, reason, max_players, ended FROM game_sessions WHERE id = ?`), id).
						Scan(&name, &status, &compute, &reason, &maxPlayers, &ended)
					if err != nil {
						t.Fatal(err)
					}
					return [6]any{name, status, compute, reason, maxPlayers, ended}
				}
				change := func(fn func(gs *game.GameSession)) {
					w.update(func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						fn(gs)
						return tx.UpdateGameSession(gs)
					})
				}
				change(func(gs *game.GameSession) { gs.Name = "renamed" })
				w.agree(id)
				if got, want := columns(), [6]any{"renamed", game.SessionActive, "", "", int64(4), int64(0)}; got != want {
					t.Errorf("after a new name: columns %v, want %v", got, want)
				}
				end := time.UnixMilli(time.Now().UnixMilli())
				change(func(gs *game.GameSession) {
					gs.Status, gs.StatusReason, gs.TerminationTime, gs.ComputeName = game.SessionTerminated, "INTERRUPTED", end, "compute-2"
				}) // an ended session leaves the memory
				if got, want := columns(), [6]any{"renamed", game.SessionTerminated, "compute-2", "INTERRUPTED", int64(4), end.UnixMilli()}; got != want {
					t.Errorf("after the end: columns %v, want %v", got, want)
				}
			})

			t.Run("written earlier in the batch", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				var seen *game.GameSession
				errs := w.db.RunBatch(
					func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						gs.PlayerSessionCreationPolicy = game.DenyAll
						return tx.UpdateGameSession(gs)
					},
					func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id) // the memory has not heard of the job before
						if err != nil {
							return err
						}
						seen = gs
						if err := reserve(tx, id, 1); !game.IsKind(err, game.InvalidGameSessionStatus) {
							t.Errorf("a seat in a session the batch closed: %v, want InvalidGameSessionStatus", err)
						}
						return nil
					},
					func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						gs.Name = "second"
						return tx.UpdateGameSession(gs)
					},
				)
				for i, err := range errs {
					if err != nil {
						t.Errorf("job %d: %v", i, err)
					}
				}
				if seen == nil || seen.PlayerSessionCreationPolicy != game.DenyAll {
					t.Errorf("the second job read %+v, want the first job's DENY_ALL", seen)
				}
				gs := w.agree(id)
				if _, _, v := w.stored(id); gs.Name != "second" || gs.PlayerSessionCreationPolicy != game.DenyAll || v != 3 {
					t.Errorf("after the batch: %+v at version %d", gs, v)
				}
			})

			t.Run("failed job", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				before := w.agree(id)
				errs := w.db.RunBatch(
					func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						gs.Status = game.SessionTerminating
						if err := tx.UpdateGameSession(gs); err != nil {
							return err
						}
						return errOnPurpose
					},
					func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						if !reflect.DeepEqual(gs, before) {
							t.Errorf("after a failed job, the next read\n%+v\nwant\n%+v", gs, before)
						}
						return reserve(tx, id, 2)
					},
					func(tx store.Tx) error {
						if err := reserve(tx, id, 1); err != nil {
							return err
						}
						return errOnPurpose
					},
				)
				if !errors.Is(errs[0], errOnPurpose) || errs[1] != nil || !errors.Is(errs[2], errOnPurpose) {
					t.Fatalf("jobs answered %v", errs)
				}
				gs := w.agree(id)
				if _, _, v := w.stored(id); gs.Status != game.SessionActive || gs.CurrentPlayerSessionCount != 2 || v != 2 {
					t.Errorf("after the batch: %s with %d seats at version %d, want ACTIVE, 2, 2", gs.Status, gs.CurrentPlayerSessionCount, v)
				}
			})

			t.Run("memory behind the store", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				// A write the memory does not hear of, which a store that
				// is the only writer never sees.
				if _, err := w.raw.Exec(rebind(w.db, `UPDATE game_sessions SET name = 'behind', version = version + 1 WHERE id = ?`), id); err != nil {
					t.Fatal(err)
				}
				for _, write := range []func(tx store.Tx, gs *game.GameSession) error{
					func(tx store.Tx, gs *game.GameSession) error { gs.Name = "lost"; return tx.UpdateGameSession(gs) },
					func(tx store.Tx, gs *game.GameSession) error { return reserve(tx, id, 1) },
					func(tx store.Tx, gs *game.GameSession) error { // folded into one update on PostgreSQL
						gs.Name = "lost"
						if err := tx.UpdateGameSession(gs); err != nil {
							return err
						}
						return reserve(tx, id, 1)
					},
				} {
					err := w.db.Update(context.Background(), func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						if gs.Name == "behind" {
							t.Errorf("read %q: the write transaction read the store, not the memory", gs.Name)
						}
						return write(tx, gs)
					})
					if err == nil || !strings.Contains(err.Error(), "not in memory") {
						t.Errorf("a write from a memory behind the store: %v, want it refused", err)
					}
				}
				gs, _, v := w.stored(id)
				if gs.Name != "behind" || gs.CurrentPlayerSessionCount != 0 || v != 2 {
					t.Errorf("the store after the refused writes: %q, %d seats, version %d", gs.Name, gs.CurrentPlayerSessionCount, v)
				}
			})

			// A job's update of a session and its seats taken next are one
			// UPDATE on PostgreSQL (memsessions.go, writeKnown): the row
			// gets one new version, not two, and ends as the two writes
			// would have left it, its version raised by both.
			t.Run("status and seats in one update", func(t *testing.T) {
				w := open(t)
				id := w.newSession(4)
				w.agree(id)
				lineOf := func() int {
					t.Helper()
					var ctid string
					if err := w.raw.QueryRow(`SELECT ctid::text FROM game_sessions WHERE id = $1`, id).Scan(&ctid); err != nil {
						t.Fatal(err)
					}
					var page, line int
					if _, err := fmt.Sscanf(ctid, "(%d,%d)", &page, &line); err != nil {
						t.Fatal(err)
					}
					return line
				}
				var before int
				if name == "postgres" {
					before = lineOf()
				}
				w.update(func(tx store.Tx) error {
					gs, err := tx.GetGameSession(id)
					if err != nil {
						return err
					}
					gs.Status, gs.Name = game.SessionActive, "both"
					gs.PlayerSessionCreationPolicy = game.AcceptAll
					if err := tx.UpdateGameSession(gs); err != nil {
						return err
					}
					if err := reserve(tx, id, 2); err != nil {
						return err
					}
					return reserve(tx, id, 1)
				})
				gs := w.agree(id)
				if _, _, v := w.stored(id); gs.Name != "both" || gs.CurrentPlayerSessionCount != 3 || v != 4 {
					t.Errorf("after the job: %q, %d seats, version %d; want both, 3, 4", gs.Name, gs.CurrentPlayerSessionCount, v)
				}
				if name == "postgres" {
					// The player sessions' inserts come between the two
					// reservations: those two are not consecutive, and stay
					// two updates; the first is folded into the session's.
					if after := lineOf(); after != before+2 {
						t.Errorf("the row's line went from %d to %d: %d new versions, want 2 (the update and the first seats as one)", before, after, after-before)
					}
				}
			})

			// A batch's jobs leave their last writes for the next job's
			// round trip on PostgreSQL (batch.go): a guard that fails
			// there, in the middle job, is found only after the jobs
			// behind it ran. The batch runs again without deferring, and
			// the outcome is each job's own, as if they had never been
			// sent together: the middle job refused, the others written.
			t.Run("stale write in the middle of a batch", func(t *testing.T) {
				w := open(t)
				a, b, c := w.newSession(4), w.newSession(4), w.newSession(4)
				if _, err := w.raw.Exec(rebind(w.db, `UPDATE game_sessions SET name = 'behind', version = version + 1 WHERE id = ?`), b); err != nil {
					t.Fatal(err)
				}
				rename := func(id, name string) func(tx store.Tx) error {
					return func(tx store.Tx) error {
						gs, err := tx.GetGameSession(id)
						if err != nil {
							return err
						}
						gs.Name = name
						if err := tx.UpdateGameSession(gs); err != nil {
							return err
						}
						return reserve(tx, id, 1)
					}
				}
				errs := w.db.RunBatch(rename(a, "a"), rename(b, "lost"), rename(c, "c"))
				if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "not in memory") || errs[2] != nil {
					t.Fatalf("jobs answered %v, want nil, a stale refusal, nil", errs)
				}
				for id, want := range map[string]string{a: "a", c: "c"} {
					if gs := w.agree(id); gs.Name != want || gs.CurrentPlayerSessionCount != 1 {
						t.Errorf("%s after the batch: %q, %d seats; want %q, 1", id, gs.Name, gs.CurrentPlayerSessionCount, want)
					}
				}
				if gs, _, v := w.stored(b); gs.Name != "behind" || gs.CurrentPlayerSessionCount != 0 || v != 2 {
					t.Errorf("the stale session after the batch: %q, %d seats, version %d", gs.Name, gs.CurrentPlayerSessionCount, v)
				}
			})

			t.Run("claims", func(t *testing.T) {
				w := open(t)
				put := func(pid string) {
					w.update(func(tx store.Tx) error {
						return tx.PutProcess(&game.Process{FleetID: testFleet, ComputeName: "host-1", PID: pid, Location: "custom-a",
							Status: game.ProcessActive, Healthy: true, Connected: true, CreationTime: time.Now()})
					})
				}
				claimed := func() (string, int64) {
					var gs string
					var version int64
					if err := w.raw.QueryRow(`SELECT game_session_id, version FROM processes WHERE pid = 'p1'`).Scan(&gs, &version); err != nil {
						t.Fatal(err)
					}
					return gs, version
				}
				put("p1")
				// Claimed by the first job; the second job of the batch,
				// which the memory has not told of the first's claim, finds
				// it taken and nothing else free.
				errs := w.db.RunBatch(
					func(tx store.Tx) error {
						p, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-1", 0)
						if err == nil && p.PID != "p1" {
							t.Errorf("claimed %s, want p1", p.PID)
						}
						return err
					},
					func(tx store.Tx) error {
						_, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-2", 0)
						return err
					},
				)
				if errs[0] != nil || !game.IsKind(errs[1], game.NotFound) {
					t.Fatalf("claims answered %v, want nil, NotFound", errs)
				}
				if gs, v := claimed(); gs != "gs-1" || v != 2 {
					t.Errorf("p1 hosts %q at version %d, want gs-1 at 2", gs, v)
				}
				// A claim that fails with its job leaves the process free.
				put("p1")
				w.update(func(tx store.Tx) error {
					p, err := tx.GetProcess(testFleet, "host-1", "p1")
					if err != nil {
						return err
					}
					p.GameSessionID = ""
					return tx.PutProcess(p)
				})
				err := w.db.Update(context.Background(), func(tx store.Tx) error {
					if _, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-3", 0); err != nil {
						return err
					}
					return errOnPurpose
				})
				if !errors.Is(err, errOnPurpose) {
					t.Fatalf("a failed claim: %v", err)
				}
				if gs, _ := claimed(); gs != "" {
					t.Errorf("after a failed claim p1 hosts %q", gs)
				}
				if w.db.Dialect() != "postgres" {
					return
				}
				// The claim queued from memory is guarded by the version
				// the memory holds.
				if _, err := w.raw.Exec(`UPDATE processes SET version = version + 1 WHERE pid = 'p1'`); err != nil {
					t.Fatal(err)
				}
				err = w.db.Update(context.Background(), func(tx store.Tx) error {
					_, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-4", 0)
					return err
				})
				if err == nil || !strings.Contains(err.Error(), "not in memory") {
					t.Errorf("a claim from a memory behind the store: %v, want it refused", err)
				}
				if gs, _ := claimed(); gs != "" {
					t.Errorf("after a refused claim p1 hosts %q", gs)
				}
			})

			t.Run("placement with its queue", func(t *testing.T) {
				w := open(t)
				now := time.Now()
				w.update(func(tx store.Tx) error {
					if err := tx.InsertQueue(&game.Queue{Name: "q1", ARN: "arn:q1", CreationTime: now, NotificationTarget: "t1"}); err != nil {
						return err
					}
					for _, p := range []*game.Placement{
						{ID: "p1", QueueName: "q1", QueueARN: "arn:q1", Status: game.PlacementPending, GameSessionID: "gs-1", StartTime: now, Deadline: now.Add(time.Minute)},
						{ID: "p2", QueueName: "q2", QueueARN: "arn:q2", Status: game.PlacementPending, GameSessionID: "gs-2", StartTime: now, Deadline: now.Add(time.Minute)},
					} {
						if err := tx.InsertPlacement(p); err != nil {
							return err
						}
					}
					return nil
				})
				w.update(func(tx store.Tx) error {
					p, err := tx.PlacementOfSession("gs-1")
					if err != nil || p.ID != "p1" {
						t.Errorf("placement of gs-1: %+v, %v", p, err)
						return err
					}
					if w.db.Dialect() == "postgres" {
						// The queue is locked as GetQueue locks it.
						other, err := w.raw.Begin()
						if err != nil {
							return err
						}
						if _, err := other.Exec(`SET LOCAL lock_timeout = '200ms'`); err != nil {
							return err
						}
						_, err = other.Exec(`UPDATE game_session_queues SET doc = doc WHERE name = 'q1'`)
						other.Rollback()
						if err == nil || !strings.Contains(err.Error(), "lock") {
							t.Errorf("a write of the queue beside the transaction: %v, want it to wait (lock_timeout)", err)
						}
					}
					q, err := tx.GetQueue("q1")
					if err != nil || q.NotificationTarget != "t1" {
						t.Errorf("queue q1: %+v, %v", q, err)
					}
					// A placement whose queue is gone.
					if p, err := tx.PlacementOfSession("gs-2"); err != nil || p.ID != "p2" {
						t.Errorf("placement of gs-2: %+v, %v", p, err)
					}
					if _, err := tx.GetQueue("q2"); !game.IsKind(err, game.NotFound) {
						t.Errorf("queue q2: %v, want NotFound", err)
					}
					if _, err := tx.PlacementOfSession("gs-3"); !game.IsKind(err, game.NotFound) {
						t.Errorf("placement of gs-3: %v, want NotFound", err)
					}
					return nil
				})
			})

			t.Run("keys", func(t *testing.T) {
				w := open(t)
				first := w.newSession(2)
				_, firstPK, _ := w.stored(first)
				var ids []string
				mk := func(idString string) *game.GameSession {
					gs := &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/" + testFleet + "/custom-a/" + idString,
						IDString: idString, FleetID: testFleet, Location: "custom-a", CreationTime: time.Now(),
						MaximumPlayerSessionCount: 2, Status: game.SessionActivating, PlayerSessionCreationPolicy: game.AcceptAll,
						Properties: []game.Property{{Key: "k", Value: idString}}}
					ids = append(ids, gs.ID)
					return gs
				}
				a, b := mk("gsess-a"), mk("gsess-b")
				dup := *a
				dup.ID += "-again" // the same IdempotencyToken in the fleet
				errs := w.db.RunBatch(
					func(tx store.Tx) error { return tx.InsertGameSession(a) },
					func(tx store.Tx) error { return tx.InsertGameSession(&dup) },
					func(tx store.Tx) error { return tx.InsertGameSession(b) },
				)
				if errs[0] != nil || !game.IsKind(errs[1], game.Conflict) || errs[2] != nil {
					t.Fatalf("inserts answered %v, want nil, Conflict, nil", errs)
				}
				seen := map[int64]bool{firstPK: true}
				for _, id := range ids {
					w.agree(id)
					_, pk, _ := w.stored(id)
					if seen[pk] {
						t.Errorf("row key %d given twice", pk)
					}
					seen[pk] = true
				}
				var n int
				if err := w.raw.QueryRow(`SELECT COUNT(*) FROM game_session_properties`).Scan(&n); err != nil || n != 3 {
					t.Errorf("%d property rows (%v), want 3", n, err)
				}
			})
		})
	}
}

// fakeOwners is a node "n1" holding testFleet at epoch held (sqldb.Owners).
type fakeOwners struct{ held int64 }

func (o *fakeOwners) Self() string    { return "n1" }
func (o *fakeOwners) Fencing() bool   { return true }
func (o *fakeOwners) Owned() []string { return []string{testFleet} }
func (o *fakeOwners) Held(string) (int64, bool) {
	return o.held, true
}
func (o *fakeOwners) Adopt(_ string, epoch int64) { o.held = epoch }

// A node that finds at its fence that the store names it the fleet's owner
// at another epoch than it held (it lost the fleet and got it back, and
// another node may have written it meanwhile) fails a write that read the
// fleet from memory, and adopts the lease; the next write goes through.
func TestFenceAtAnotherEpochFailsMemoryReads(t *testing.T) {
	open := memWorlds(t)["postgres"]
	if open == nil {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	w := open(t)
	id := w.newSession(4)
	if _, err := w.raw.Exec(`INSERT INTO fleet_owners (fleet_id, node_id, epoch) VALUES ('` + testFleet + `', 'n1', 2)`); err != nil {
		t.Fatal(err)
	}
	owners := &fakeOwners{held: 1}
	w.db.SetOwners(owners)
	rename := func(name string) error {
		return w.db.Update(context.Background(), func(tx store.Tx) error {
			gs, err := tx.GetGameSession(id)
			if err != nil {
				return err
			}
			gs.Name = name
			return tx.UpdateGameSession(gs)
		})
	}
	if err := rename("first"); err == nil || !strings.Contains(err.Error(), "epoch 2") {
		t.Fatalf("a write read from memory at epoch 1, fenced at 2: %v, want it refused", err)
	}
	if owners.held != 2 {
		t.Errorf("held epoch %d after the fence, want 2 (adopted)", owners.held)
	}
	if gs, _, v := w.stored(id); gs.Name != "" || v != 1 {
		t.Errorf("after the refused write: %q at version %d", gs.Name, v)
	}
	if err := rename("second"); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if gs := w.agree(id); gs.Name != "second" {
		t.Errorf("after the next write: %q", gs.Name)
	}
}

// TestSearchInAWriteSeesTheJobsQueuedWrites: a search inside a write
// transaction runs after what the job has queued (on PostgreSQL grouped,
// a session's insert goes in the pipeline), so it finds the session the
// job has just inserted, with or without a filter (the filter's probe of
// the property index is a query of its own).
func TestSearchInAWriteSeesTheJobsQueuedWrites(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			w.newSession(4)
			filter, err := search.ParseFilter("gameSessionProperties.mode = 'duel'")
			if err != nil {
				t.Fatal(err)
			}
			w.update(func(tx store.Tx) error {
				gs := &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/" + testFleet + "/custom-a/gsess-new",
					IDString: "gsess-new", FleetID: testFleet, Location: "custom-a", CreationTime: time.Now(),
					MaximumPlayerSessionCount: 4, Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll,
					Properties: []game.Property{{Key: "mode", Value: "duel"}}}
				if err := tx.InsertGameSession(gs); err != nil {
					return err
				}
				for _, f := range []search.Expr{nil, filter} {
					list, _, err := tx.SearchGameSessions(store.SearchQuery{FleetID: testFleet, Filter: f}, store.Page{Limit: 10})
					if err != nil {
						return err
					}
					if len(list) != 2 {
						t.Errorf("filter %v: %d sessions found in the write that inserted the second, want 2", f, len(list))
					}
				}
				return nil
			})
		})
	}
}
