package lifecycle_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// On PostgreSQL a placement started on a queue while another node deletes
// the queue is failed with it: a start that read (locked FOR SHARE) the
// queue before the deletion, and commits while the deletion waits on that
// lock, is seen by the deletion, which lists the queue's pending
// placements only once it has the row. Here the start is another node's
// transaction, held open with its placement inserted.
func TestQueueDeletedWhileAPlacementStartsFailsIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		dsn := h.env.Config.Store
		if !strings.HasPrefix(dsn, "postgres") {
			t.Skip("one writer on SQLite: no start can be in flight")
		}
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("race"), Destinations: dest(h.fleet)})
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("r-0"), GameSessionQueueName: aws.String("race"),
			MaximumPlayerSessionCount: aws.Int32(4)})
		raw, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		other, err := raw.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer other.Rollback()
		var pid int
		if err := other.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		// Another node's StartGameSessionPlacement, not yet committed.
		if _, err := other.Exec(`SELECT doc FROM game_session_queues WHERE name = 'race' FOR SHARE`); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Exec(`INSERT INTO placements (id, queue, status, game_session_id, started, deadline, ended, doc)
			SELECT 'r-1', queue, status, game_session_id, started, deadline, ended, replace(doc, '"r-0"', '"r-1"') FROM placements WHERE id = 'r-0'`); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := h.gl.DeleteGameSessionQueue(context.Background(), &gamelift.DeleteGameSessionQueueInput{Name: aws.String("race")})
			done <- err
		}()
		// Wait until the deletion waits for the start's lock.
		for blocked := false; !blocked; {
			if err := raw.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))`, pid).Scan(&blocked); err != nil {
				t.Fatal(err)
			}
		}
		if err := other.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"r-0", "r-1"} {
			if got := h.placement(id); got.Status != types.GameSessionPlacementStateFailed {
				t.Errorf("placement %s is %s after its queue was deleted, want FAILED", id, got.Status)
			}
		}
	})
}
