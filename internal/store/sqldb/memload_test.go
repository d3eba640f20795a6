package sqldb_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// A fleet the memory starts answering for in the middle of a transaction
// (an owned fleet's load finishing, owned.Memory) is read from the store
// to that transaction's end. A claim made through the store, read back
// from a memory that does not know of it yet, came back free, was fed to
// the memory as free, and the process it had been given to was refused
// its own game session ("not hosted by this server process").
func TestFleetLoadedDuringAClaim(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			procs := fleetstate.New()
			// held: the memory answers for the fleet; once flip is set,
			// the first question of the next transaction is answered no
			// (the fleet still loading) and every later one yes.
			var flip atomic.Bool
			var asked atomic.Int32
			w.db.SetLiveProcessesFor(procs, func(string) bool { return !flip.Load() || asked.Add(1) > 1 })
			w.db.SetCommitHook(func(c []store.Change) { w.mem.Apply(c); procs.Apply(c) })
			w.update(func(tx store.Tx) error {
				return tx.PutProcess(&game.Process{FleetID: testFleet, ComputeName: "host-1", PID: "p1", Location: "custom-a",
					Status: game.ProcessActive, Healthy: true, Connected: true, CreationTime: time.Now()})
			})

			flip.Store(true)
			w.update(func(tx store.Tx) error {
				p, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-1", 0)
				if err == nil && (p.PID != "p1" || p.GameSessionID != "gs-1") {
					t.Errorf("claimed %s for %q, want p1 for gs-1", p.PID, p.GameSessionID)
				}
				return err
			})
			if p, ok := procs.Get(testFleet, "host-1", "p1"); !ok || p.GameSessionID != "gs-1" {
				t.Errorf("the memory holds p1 for %q (held %v), want gs-1", p.GameSessionID, ok)
			}
			if n := procs.Count(testFleet, "custom-a", 0); n != 0 {
				t.Errorf("the memory counts %d free processes, want 0", n)
			}
			err := w.db.Update(context.Background(), func(tx store.Tx) error {
				_, err := tx.ClaimFreeProcess(testFleet, "custom-a", "gs-2", 0)
				return err
			})
			if !game.IsKind(err, game.NotFound) {
				t.Errorf("a second claim: %v, want NotFound (no free process)", err)
			}
			w.update(func(tx store.Tx) error {
				p, err := tx.GetProcess(testFleet, "host-1", "p1")
				if err == nil && p.GameSessionID != "gs-1" {
					t.Errorf("p1 read in a write hosts %q, want gs-1", p.GameSessionID)
				}
				return err
			})
		})
	}
}
