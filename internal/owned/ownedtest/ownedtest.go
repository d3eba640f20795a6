// Package ownedtest runs a memory of owned fleets (internal/owned) on a
// PostgreSQL store in tests: one node, which owns every fleet it creates.
package ownedtest

import (
	"context"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleetstate"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// Self is the node's id.
const Self = "node-a"

// Start makes db, a fresh PostgreSQL store, the store of node Self with
// fleet ownership in force, holding the fleets it owns in l: every fleet
// inserted from then on is Self's, and loaded into l (WaitLoaded).
func Start(t testing.TB, db *sqldb.DB, l *live.Sessions) *owned.Memory {
	t.Helper()
	m := owners.New(Self)
	db.SetOwners(m)
	mem := owned.Follow(db, m, l, fleetstate.New(), nil)
	ctx := context.Background()
	err := db.Update(ctx, func(tx store.Tx) error {
		return tx.BeatNode(&store.Node{ID: Self, Address: "http://" + Self, Started: time.Now(), OwnsFleets: true})
	})
	if err == nil {
		err = db.View(ctx, func(tx store.Tx) error {
			nodes, err := tx.ListNodes(time.Hour)
			m.Refresh(nil, nodes, owners.On(nodes))
			return err
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// WaitLoaded waits until mem answers for every fleet of ids.
func WaitLoaded(t testing.TB, mem *owned.Memory, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for !mem.Loaded(id) {
			if time.Now().After(deadline) {
				t.Fatalf("fleet %s never loaded into memory", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
