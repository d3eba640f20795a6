package fleetstate_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// inOneBatch runs the write transactions fns in one group-commit batch,
// in order, and answers their errors: a first transaction holds the
// committer until every one of fns waits for it (synctest.Wait), and the
// committer takes waiting transactions in the order they came.
func inOneBatch(t *testing.T, w *world, fns ...func(store.Tx) error) []error {
	hold := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		w.db.Update(context.Background(), func(store.Tx) error { <-hold; return nil })
	})
	synctest.Wait()
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Go(func() { errs[i] = w.db.Update(context.Background(), fn) })
		synctest.Wait()
	}
	close(hold)
	wg.Wait()
	return errs
}

func ready(pid string, created int) *game.Process {
	return &game.Process{FleetID: testFleet, ComputeName: "host-0", PID: pid, Location: "custom-a", Status: game.ProcessActive,
		Healthy: true, Connected: true, AwaitingHeartbeat: true, Port: 7000, CreationTime: epoch.Add(time.Duration(created) * time.Millisecond)}
}

// TestClaimSeesTheBatchsEarlierWrites: the memory learns of writes at
// commit; a claim after another job of its batch changed the process
// (its first heartbeat; then an unhealthy report) claims it as that job
// left it, or skips it.
func TestClaimSeesTheBatchsEarlierWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		p1, p2 := ready("p1", 0), ready("p2", 1)
		if err := w.db.Update(context.Background(), func(tx store.Tx) error {
			return errorsOf(tx.PutProcess(p1), tx.PutProcess(p2))
		}); err != nil {
			t.Fatal(err)
		}
		// The first heartbeat, then a claim in the same batch: the claim
		// must know the start can be pushed at once.
		var got *game.Process
		heard := *p1
		heard.AwaitingHeartbeat = false
		errs := inOneBatch(t, w,
			func(tx store.Tx) error { return tx.PutProcess(&heard) },
			func(tx store.Tx) error {
				var err error
				got, err = tx.ClaimFreeProcess(testFleet, "custom-a", "gs-1", 0)
				return err
			})
		if errorsOf(errs...) != nil {
			t.Fatal(errs)
		}
		want := heard
		want.GameSessionID = "gs-1"
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("claimed %+v\n want %+v", got, &want)
		}
		// p2 turns unhealthy, then a claim in the same batch: none is free.
		sick := *p2
		sick.Healthy = false
		errs = inOneBatch(t, w,
			func(tx store.Tx) error { return tx.PutProcess(&sick) },
			func(tx store.Tx) error {
				_, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-2", 0)
				return err
			})
		if errs[0] != nil || !game.IsKind(errs[1], game.NotFound) {
			t.Errorf("claim after the unhealthy report: %v", errs)
		}
		if free := w.mem.Free(testFleet, "custom-a"); len(free) != 0 {
			t.Errorf("free after the batch: %v", free)
		}
	})
}

// TestFailedJobGivesItsClaimBack: a claim whose job fails is free again
// for the next job of the same batch, and after it.
func TestFailedJobGivesItsClaimBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		if err := w.db.Update(context.Background(), func(tx store.Tx) error { return tx.PutProcess(ready("p1", 0)) }); err != nil {
			t.Fatal(err)
		}
		var second *game.Process
		errs := inOneBatch(t, w,
			func(tx store.Tx) error {
				if _, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-1", 0); err != nil {
					return err
				}
				return errOnPurpose
			},
			func(tx store.Tx) error {
				var err error
				second, err = tx.ClaimFreeProcess(testFleet, "custom-a", "gs-2", 0)
				return err
			},
			func(tx store.Tx) error {
				_, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-3", 0)
				return err
			})
		if errs[0] != errOnPurpose || errs[1] != nil || !game.IsKind(errs[2], game.NotFound) {
			t.Fatalf("errors %v", errs)
		}
		if second.PID != "p1" || second.GameSessionID != "gs-2" {
			t.Errorf("second claim %+v", second)
		}
		if free := w.mem.Free(testFleet, "custom-a"); len(free) != 0 {
			t.Errorf("free after the batch: %v", free)
		}
	})
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
