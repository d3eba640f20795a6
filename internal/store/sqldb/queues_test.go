package sqldb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// The tests here hold a queue taken as last read (queues.go: a grouped,
// pipelined job on PostgreSQL reads no queue, its lock guarded on the
// document last read) to the store, on SQLite and on PostgreSQL: a queue
// changed or deleted by another writer is never acted on as it was, a
// placement never references a deleted queue, and a placement started
// after a queue's update commits takes the new definition.

// queueWorld is a memWorld with queue q (timeout 60 s), read once by a
// write transaction, so that the store keeps it as last read.
func queueWorld(t *testing.T, open func(t *testing.T) *memWorld) *memWorld {
	w := open(t)
	w.update(func(tx store.Tx) error {
		return tx.InsertQueue(&game.Queue{Name: "q", ARN: "arn:q", TimeoutSeconds: 60, CreationTime: time.Now(), NotificationTarget: "t1"})
	})
	w.update(func(tx store.Tx) error { _, err := tx.GetQueue("q"); return err })
	return w
}

// queueBehindBack writes queue q's row as another node would: its
// timeout set to timeout, or the row deleted when timeout is 0.
func (w *memWorld) queueBehindBack(timeout int) {
	w.t.Helper()
	var err error
	if timeout == 0 {
		_, err = w.raw.Exec(w.sql(`DELETE FROM game_session_queues WHERE name = ?`), "q")
	} else {
		doc, _ := json.Marshal(&game.Queue{Name: "q", ARN: "arn:q", TimeoutSeconds: timeout, NotificationTarget: "t2"})
		_, err = w.raw.Exec(w.sql(`UPDATE game_session_queues SET doc = ? WHERE name = ?`), string(doc), "q")
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

// sql numbers q's placeholders for PostgreSQL.
func (w *memWorld) sql(q string) string {
	if w.db.Dialect() != "postgres" {
		return q
	}
	out, n := []byte{}, 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out = append(out, fmt.Sprintf("$%d", n)...)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

// start runs what StartGameSessionPlacement runs in its transaction:
// the queue read, then the placement inserted with the queue's timeout
// as its deadline. It answers the timeout each attempt saw ("none" for
// NotFound) and the job's outcome.
func (w *memWorld) start(id string) ([]string, error) {
	var seen []string
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		q, err := tx.GetQueue("q")
		if err != nil {
			seen = append(seen, "none")
			return err
		}
		seen = append(seen, fmt.Sprint(q.TimeoutSeconds))
		p := testPlacement(id)
		p.QueueName, p.QueueARN = q.Name, q.ARN
		p.Deadline = p.StartTime.Add(time.Duration(q.TimeoutSeconds) * time.Second)
		return tx.InsertPlacement(p)
	})
	return seen, err
}

// placementCount counts the placements stored.
func (w *memWorld) placementCount() int {
	w.t.Helper()
	var n int
	if err := w.raw.QueryRow(`SELECT COUNT(*) FROM placements`).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

func TestQueueUpdatedBehindItsLastReadIsReadAgain(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := queueWorld(t, open)
			w.queueBehindBack(120) // another node's UpdateGameSessionQueue, committed
			seen, err := w.start("pl-1")
			if err != nil {
				t.Fatal(err)
			}
			// PostgreSQL takes the queue as last read, and its guard sends
			// the job round again; SQLite reads it at once.
			want := map[string][]string{"postgres": {"60", "120"}, "sqlite": {"120"}}[name]
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("attempts saw timeouts %v, want %v", seen, want)
			}
			p := w.storedPlacement("pl-1")
			if d := p.Deadline.Sub(p.StartTime); d != 120*time.Second {
				t.Fatalf("stored placement's deadline is %v after its start, want the updated queue's 120s", d)
			}
			// Now read from the store, it is kept as that: the next start
			// runs once.
			if seen, err := w.start("pl-2"); err != nil || fmt.Sprint(seen) != "[120]" {
				t.Fatalf("next start saw %v, %v", seen, err)
			}
		})
	}
}

func TestQueueDeletedBehindItsLastReadPlacesNothing(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := queueWorld(t, open)
			w.queueBehindBack(0) // another node's DeleteGameSessionQueue, committed
			seen, err := w.start("pl-1")
			if !game.IsKind(err, game.NotFound) {
				t.Fatalf("start answered %v, want NotFound", err)
			}
			want := map[string][]string{"postgres": {"60", "none"}, "sqlite": {"none"}}[name]
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("attempts saw %v, want %v", seen, want)
			}
			if n := w.placementCount(); n != 0 {
				t.Fatalf("%d placements stored, want none on a deleted queue", n)
			}
		})
	}
}

// A duplicate placement id answers Conflict, and an unknown queue
// NotFound, as they did when the queue was read.
func TestStartOnQueueAsLastReadConflictAndNotFound(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := queueWorld(t, open)
			if _, err := w.start("pl-1"); err != nil {
				t.Fatal(err)
			}
			seen, err := w.start("pl-1")
			if !game.IsKind(err, game.Conflict) || fmt.Sprint(seen) != "[60]" {
				t.Fatalf("duplicate id: attempts saw %v, answered %v; want one attempt, Conflict", seen, err)
			}
			err = w.db.Update(context.Background(), func(tx store.Tx) error {
				_, err := tx.GetQueue("nope")
				return err
			})
			if !game.IsKind(err, game.NotFound) {
				t.Fatalf("unknown queue answered %v, want NotFound", err)
			}
		})
	}
}

// A job whose queued statements go with the batch's COMMIT (an
// activation's: the placement from memory, the queue as last read, the
// placement's end queued) has its queue's guard checked by the database
// there: a queue deleted meanwhile commits nothing of that attempt, and
// the job runs again reading the store.
func TestQueueGuardCheckedWithTheCommit(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := queueWorld(t, open)
			for _, id := range []string{"pl-0", "pl-1"} {
				if _, err := w.start(id); err != nil {
					t.Fatal(err)
				}
			}
			var seen []string
			end := func(id string) error {
				return w.db.RunBatch(func(tx store.Tx) error { return endOn(tx, id, &seen) })[0]
			}
			// The queue unchanged: one attempt, its guard passed.
			if err := end("pl-0"); err != nil || fmt.Sprint(seen) != "[t1]" {
				t.Fatalf("attempts saw %v, %v", seen, err)
			}
			if s := w.storedPlacement("pl-0"); s.Status != game.PlacementFulfilled {
				t.Fatalf("stored placement is %s, want FULFILLED", s.Status)
			}
			seen = nil
			w.queueBehindBack(0)
			if err := end("pl-1"); err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"postgres": {"t1", "none"}, "sqlite": {"none"}}[name]
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("attempts saw %v, want %v", seen, want)
			}
			if s := w.storedPlacement("pl-1"); s.Status != game.PlacementFailed {
				t.Fatalf("stored placement is %s, want FAILED (its queue gone)", s.Status)
			}
		})
	}
}

// endOn ends placement id as its session's activation would: FULFILLED,
// or FAILED when its queue is gone; seen gets the queue's notification
// target at each attempt ("none" when gone).
func endOn(tx store.Tx, id string, seen *[]string) error {
	p, err := tx.GetPlacement(id)
	if err != nil {
		return err
	}
	q, err := tx.GetQueue("q")
	if game.IsKind(err, game.NotFound) {
		*seen = append(*seen, "none")
		p.Status = game.PlacementFailed
		return tx.UpdatePlacement(p)
	}
	if err != nil {
		return err
	}
	*seen = append(*seen, q.NotificationTarget)
	p.Status = game.PlacementFulfilled
	return tx.UpdatePlacement(p)
}

// On PostgreSQL another node's change of the queue may be running, not
// yet committed, as the job sends its guard: the guard waits for it, as
// the read FOR SHARE did, and finds the row changed once it commits (or
// gone once deleted). The job then runs again on the store's queue.
func TestQueueChangedWhileItsGuardWaits(t *testing.T) {
	for name, open := range memWorlds(t) {
		if name != "postgres" {
			continue // SQLite has one writer: no change can be in flight
		}
		for _, timeout := range []int{120, 0} {
			t.Run(fmt.Sprintf("%s/timeout-%d", name, timeout), func(t *testing.T) {
				w := queueWorld(t, open)
				other, err := w.raw.Begin()
				if err != nil {
					t.Fatal(err)
				}
				defer other.Rollback()
				var pid int
				if err := other.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
					t.Fatal(err)
				}
				if timeout == 0 {
					_, err = other.Exec(`DELETE FROM game_session_queues WHERE name = 'q'`)
				} else {
					doc, _ := json.Marshal(&game.Queue{Name: "q", ARN: "arn:q", TimeoutSeconds: timeout})
					_, err = other.Exec(`UPDATE game_session_queues SET doc = $1 WHERE name = 'q'`, string(doc))
				}
				if err != nil {
					t.Fatal(err)
				}
				type outcome struct {
					seen []string
					err  error
				}
				done := make(chan outcome, 1)
				go func() {
					seen, err := w.start("pl-1")
					done <- outcome{seen, err}
				}()
				// Wait until the job waits for the other writer's lock.
				for blocked := false; !blocked; {
					if err := w.raw.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))`, pid).Scan(&blocked); err != nil {
						t.Fatal(err)
					}
				}
				if err := other.Commit(); err != nil {
					t.Fatal(err)
				}
				got := <-done
				if timeout == 0 {
					if !game.IsKind(got.err, game.NotFound) || fmt.Sprint(got.seen) != "[60 none]" {
						t.Fatalf("attempts saw %v, answered %v; want [60 none], NotFound", got.seen, got.err)
					}
					if n := w.placementCount(); n != 0 {
						t.Fatalf("%d placements stored on a deleted queue", n)
					}
					return
				}
				if got.err != nil || fmt.Sprint(got.seen) != "[60 120]" {
					t.Fatalf("attempts saw %v, answered %v; want [60 120]", got.seen, got.err)
				}
				p := w.storedPlacement("pl-1")
				if d := p.Deadline.Sub(p.StartTime); d != 120*time.Second {
					t.Fatalf("stored placement's deadline is %v after its start, want 120s", d)
				}
			})
		}
	}
}

// A job that refuses on what its queue says checks first that the queue
// is still as last read: a refusal on a queue changed since runs the job
// again, on the queue as stored.
func TestRefusalOnQueueAsLastReadIsCheckedFirst(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := queueWorld(t, open)
			w.queueBehindBack(120)
			var seen []string
			err := w.db.Update(context.Background(), func(tx store.Tx) error {
				q, err := tx.GetQueue("q")
				if err != nil {
					return err
				}
				seen = append(seen, fmt.Sprint(q.TimeoutSeconds))
				if q.TimeoutSeconds != 120 {
					return game.Errorf(game.InvalidRequest, "queue q has timeout %d", q.TimeoutSeconds)
				}
				return nil
			})
			want := map[string][]string{"postgres": {"60", "120"}, "sqlite": {"120"}}[name]
			if err != nil || fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("attempts saw %v, answered %v; want %v, no refusal", seen, err, want)
			}
			// Unchanged, the refusal stands after one attempt.
			seen = nil
			err = w.db.Update(context.Background(), func(tx store.Tx) error {
				q, err := tx.GetQueue("q")
				if err != nil {
					return err
				}
				seen = append(seen, fmt.Sprint(q.TimeoutSeconds))
				return game.Errorf(game.InvalidRequest, "refused")
			})
			if !game.IsKind(err, game.InvalidRequest) || fmt.Sprint(seen) != "[120]" {
				t.Fatalf("attempts saw %v, answered %v; want one, InvalidRequest", seen, err)
			}
		})
	}
}
