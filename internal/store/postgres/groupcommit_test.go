package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// With group commit on PostgreSQL (a node owning its fleets), a batch
// with a job that PostgreSQL refuses as a deadlock's victim is rolled
// back whole and run again: the victim lands once, and the jobs beside it
// keep their own outcomes. The refusal is PostgreSQL's own error, raised
// by a trigger the first time the job's row is inserted.
func TestGroupedJobRetriedAfterDeadlock(t *testing.T) {
	ctx := context.Background()
	db, raw := freshStore(t)
	db.EnableGroupCommit()
	for _, q := range []string{
		`CREATE SEQUENCE victim_attempts`,
		`CREATE FUNCTION victim() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.name = 'custom-victim' AND nextval('victim_attempts') = 1 THEN
				RAISE EXCEPTION 'deadlock detected (raised by the test)' USING ERRCODE = '40P01';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER victim BEFORE INSERT ON locations FOR EACH ROW EXECUTE FUNCTION victim()`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	insert := func(tx store.Tx, name string) error {
		return tx.InsertLocation(&game.Location{Name: name, ARN: "arn:" + name, CreationTime: time.Now()})
	}
	refused := errors.New("refused on purpose")
	jobs := map[string]func(tx store.Tx) error{
		"victim": func(tx store.Tx) error {
			if err := insert(tx, "custom-before-victim"); err != nil {
				return err
			}
			return insert(tx, "custom-victim")
		},
		"refused": func(tx store.Tx) error {
			if err := insert(tx, "custom-refused"); err != nil {
				return err
			}
			return refused
		},
	}
	for i := range 8 {
		jobs[fmt.Sprint("plain-", i)] = func(tx store.Tx) error { return insert(tx, fmt.Sprint("custom-plain-", i)) }
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	for name, fn := range jobs {
		wg.Go(func() {
			err := db.Update(ctx, fn)
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	for name, err := range errs {
		if want := name == "refused"; (err != nil) != want || (want && !errors.Is(err, refused)) {
			t.Errorf("job %s: %v", name, err)
		}
	}
	var attempts int64
	if err := raw.QueryRowContext(ctx, `SELECT last_value FROM victim_attempts`).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 {
		t.Errorf("the victim's insert ran %d times, want 2 (refused once, then run again)", attempts)
	}
	want := map[string]int{"custom-before-victim": 1, "custom-victim": 1, "custom-refused": 0}
	for i := range 8 {
		want[fmt.Sprint("custom-plain-", i)] = 1
	}
	for name, n := range want {
		var got int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM locations WHERE name = $1`, name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("%d rows of %s, want %d", got, name, n)
		}
	}
}
