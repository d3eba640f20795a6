package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// Fleets and computes that write transactions read are kept from one to
// the next (sqldb.DB.KeepRecords). What every write transaction reads is
// still the committed record, or its own write: a change committed is
// read at once, and a change undone (the transaction failed after
// writing, and after reading its own write back) is never read.
func TestKeptRecordsFollowCommits(t *testing.T) {
	for _, grouped := range []bool{true, false} {
		t.Run(map[bool]string{true: "grouped", false: "alone"}[grouped], func(t *testing.T) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{NoGroupCommit: !grouped})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			at := time.UnixMilli(1_700_000_000_000).UTC()
			const fleetID = "fleet-1"
			if err := st.Update(ctx, func(tx store.Tx) error {
				if err := tx.InsertFleet(&game.Fleet{ID: fleetID, Name: "v1", Status: game.FleetActive, CreationTime: at}); err != nil {
					return err
				}
				return tx.InsertCompute(&game.Compute{FleetID: fleetID, Name: "c", IPAddress: "10.0.0.1", CreationTime: at})
			}); err != nil {
				t.Fatal(err)
			}
			read := func(wantName, wantIP string) {
				t.Helper()
				for range 2 { // read, then read what was kept
					if err := st.Update(ctx, func(tx store.Tx) error {
						f, err := tx.GetFleet(fleetID)
						if err != nil {
							return err
						}
						c, err := tx.GetCompute(fleetID, "c")
						if err != nil {
							return err
						}
						if f.Name != wantName || c.IPAddress != wantIP {
							t.Errorf("read fleet %q and compute %q, want %q and %q", f.Name, c.IPAddress, wantName, wantIP)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			read("v1", "10.0.0.1")

			undone := errors.New("undone")
			if err := st.Update(ctx, func(tx store.Tx) error {
				f, err := tx.GetFleet(fleetID)
				if err != nil {
					return err
				}
				f.Name = "never"
				if err := tx.UpdateFleet(f); err != nil {
					return err
				}
				c, err := tx.GetCompute(fleetID, "c")
				if err != nil {
					return err
				}
				c.IPAddress = "10.9.9.9"
				if err := tx.UpdateCompute(c); err != nil {
					return err
				}
				// Read back inside the transaction: its own writes.
				if f, err = tx.GetFleet(fleetID); err != nil || f.Name != "never" {
					t.Errorf("own write read back as %v, %v", f, err)
				}
				if c, err = tx.GetCompute(fleetID, "c"); err != nil || c.IPAddress != "10.9.9.9" {
					t.Errorf("own write read back as %v, %v", c, err)
				}
				return undone
			}); !errors.Is(err, undone) {
				t.Fatalf("undone transaction: %v", err)
			}
			read("v1", "10.0.0.1")

			if err := st.Update(ctx, func(tx store.Tx) error {
				f, err := tx.GetFleet(fleetID)
				if err != nil {
					return err
				}
				f.Name = "v2"
				if err := tx.UpdateFleet(f); err != nil {
					return err
				}
				c, err := tx.GetCompute(fleetID, "c")
				if err != nil {
					return err
				}
				c.IPAddress = "10.0.0.2"
				return tx.UpdateCompute(c)
			}); err != nil {
				t.Fatal(err)
			}
			read("v2", "10.0.0.2")

			if err := st.Update(ctx, func(tx store.Tx) error { return tx.DeleteCompute(fleetID, "c") }); err != nil {
				t.Fatal(err)
			}
			if err := st.Update(ctx, func(tx store.Tx) error {
				_, err := tx.GetCompute(fleetID, "c")
				return err
			}); !game.IsKind(err, game.NotFound) {
				t.Fatalf("deleted compute read: %v", err)
			}
		})
	}
}

// A compute kept decoded is handed out as a copy: a reader that changes
// what it read, its ports included, changes nothing the next one reads.
func TestKeptComputeIsACopy(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.UnixMilli(1_700_000_000_000).UTC()
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertFleet(&game.Fleet{ID: "fleet-1", Status: game.FleetActive, CreationTime: at}); err != nil {
			return err
		}
		return tx.InsertCompute(&game.Compute{FleetID: "fleet-1", Name: "c", IPAddress: "10.0.0.1", CreationTime: at,
			Ports: []game.PortMapping{{Container: "game", ContainerPort: 7777, ConnectionPort: 4192, Protocol: "UDP"}}})
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // decoded and kept, then read from what was kept, twice
		if err := st.Update(ctx, func(tx store.Tx) error {
			c, err := tx.GetCompute("fleet-1", "c")
			if err != nil {
				return err
			}
			if c.IPAddress != "10.0.0.1" || len(c.Ports) != 1 || c.Ports[0].ConnectionPort != 4192 {
				t.Errorf("read %d: %+v", i, c)
			}
			c.IPAddress, c.Ports[0].ConnectionPort = "changed", 1
			c.Ports = append(c.Ports, game.PortMapping{Container: "more"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
