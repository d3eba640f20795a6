package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/storetestenv"
)

// On PostgreSQL the grouped committer sends a batch's COMMIT in the same
// round trip as its last job's queued writes. A last job that fails
// there (a guarded update that changes no row, or a write PostgreSQL
// refuses) must still commit nothing of its own and leave the jobs
// before it committed; a last job that succeeds commits with them.
func TestLastJobOfBatchCommitsWithItsWrites(t *testing.T) {
	ctx := context.Background()
	db, raw := freshPostgres(t)
	db.EnableGroupCommit()
	// A placement set to REFUSED is refused by PostgreSQL itself.
	for _, q := range []string{
		`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.status = 'REFUSED' THEN
				RAISE EXCEPTION 'refused by the test';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER refuse BEFORE UPDATE ON placements FOR EACH ROW EXECUTE FUNCTION refuse()`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	placement := func(id, status string) *game.Placement {
		return &game.Placement{ID: id, QueueName: "q", Status: status, StartTime: time.Now()}
	}
	insert := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error { return tx.InsertPlacement(placement(id, game.PlacementPending)) }
	}
	// The last job inserts a placement (an answer needed), then queues
	// an update, which goes with the COMMIT.
	last := func(id, updated, status string) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := tx.InsertPlacement(placement(id, game.PlacementPending)); err != nil {
				return err
			}
			return tx.UpdatePlacement(placement(updated, status))
		}
	}
	if errs := db.RunBatch(insert("existing")); errs[0] != nil {
		t.Fatal(errs[0])
	}
	status := func(id string) string {
		var s string
		err := raw.QueryRowContext(ctx, `SELECT status FROM placements WHERE id = $1`, id).Scan(&s)
		if errors.Is(err, sql.ErrNoRows) {
			return "absent"
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// A guarded update that changes no row: the placement to update does
	// not exist.
	errs := db.RunBatch(insert("a1"), insert("a2"), last("a3", "missing", game.PlacementFulfilled))
	if errs[0] != nil || errs[1] != nil || !game.IsKind(errs[2], game.NotFound) {
		t.Fatalf("a row not changed: outcomes %v, want nil, nil, NotFound", errs)
	}
	for id, want := range map[string]string{"a1": game.PlacementPending, "a2": game.PlacementPending, "a3": "absent"} {
		if got := status(id); got != want {
			t.Errorf("after a last job whose update changed no row, %s is %s, want %s", id, got, want)
		}
	}

	// A write that PostgreSQL refuses.
	errs = db.RunBatch(insert("b1"), last("b2", "existing", "REFUSED"))
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "refused by the test") {
		t.Fatalf("a write refused: outcomes %v, want nil and the refusal", errs)
	}
	for id, want := range map[string]string{"b1": game.PlacementPending, "b2": "absent", "existing": game.PlacementPending} {
		if got := status(id); got != want {
			t.Errorf("after a last job whose write was refused, %s is %s, want %s", id, got, want)
		}
	}

	// The last job succeeds: its update commits with the batch.
	errs = db.RunBatch(insert("c1"), last("c2", "existing", game.PlacementFulfilled))
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("outcomes %v, want nil, nil", errs)
	}
	for id, want := range map[string]string{"c1": game.PlacementPending, "c2": game.PlacementPending, "existing": game.PlacementFulfilled} {
		if got := status(id); got != want {
			t.Errorf("after a batch that succeeded, %s is %s, want %s", id, got, want)
		}
	}

	// The store is usable after each: nothing was left open.
	if errs := db.RunBatch(insert("d1")); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if got := status("d1"); got != game.PlacementPending {
		t.Errorf("d1 is %s, want %s", got, game.PlacementPending)
	}
}

// In a batch whose jobs defer their last statements, a job's savepoint
// is sent only when some of its statements run before it is over: jobs
// whose statements all wait for a later round trip run without one. A
// job that fails in its own code after its statements ran is still
// undone alone, and the jobs around it commit.
func TestDeferringBatchSendsSavepointsOnlyWhereUsed(t *testing.T) {
	ctx := context.Background()
	db, raw := freshPostgres(t)
	db.EnableGroupCommit()
	savepoints := db.CountStatements("SAVEPOINT job")
	insert := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.InsertPlacement(&game.Placement{ID: id, QueueName: "q", Status: game.PlacementPending, StartTime: time.Now()})
		}
	}
	stored := func(id string) bool {
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM placements WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	errs := db.RunBatch(insert("a1"), insert("a2"), insert("a3"), insert("a4"))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	if n := savepoints.Load(); n != 0 {
		t.Errorf("a batch of jobs that send nothing before they end sent %d savepoints, want 0", n)
	}
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		if !stored(id) {
			t.Errorf("placement %s is not stored", id)
		}
	}

	// The middle job inserts, then reads from the store (a round trip
	// that carries its insert), then fails on its own.
	own := errors.New("the job's own refusal")
	failing := func(tx store.Tx) error {
		if err := insert("b2")(tx); err != nil {
			return err
		}
		if _, err := tx.GetPlacement("a1"); err != nil {
			return err
		}
		return own
	}
	errs = db.RunBatch(insert("b1"), failing, insert("b3"))
	if errs[0] != nil || !errors.Is(errs[1], own) || errs[2] != nil {
		t.Fatalf("outcomes %v, want nil, the job's own refusal, nil", errs)
	}
	if n := savepoints.Load(); n != 1 {
		t.Errorf("the job whose insert ran before it failed: %d savepoints sent, want 1", n)
	}
	for id, want := range map[string]bool{"b1": true, "b2": false, "b3": true} {
		if got := stored(id); got != want {
			t.Errorf("placement %s stored: %v, want %v", id, got, want)
		}
	}
}

// freshPostgres opens a store on a fresh PostgreSQL schema, and a plain
// connection to the same schema, both closed when t ends; it skips t
// when PostgreSQL is not configured.
func freshPostgres(t *testing.T) (*sqldb.DB, *sql.DB) {
	t.Helper()
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	schema := storetestenv.FreshSchema(t, dsn)
	db, err := postgres.Open(context.Background(), schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	raw, err := sql.Open("pgx", schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return db, raw
}
