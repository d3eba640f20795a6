package sqldb

import (
	"context"
	"sync/atomic"

	"github.com/anylift/anylift/internal/store"
)

// RunBatch runs fns as one batch of the grouped committer (in one
// transaction, in order, each undone alone when it fails) and answers each one's
// outcome. The DB must have group commit on and nothing else writing.
func (db *DB) RunBatch(fns ...func(store.Tx) error) []error {
	batch := make([]*job, len(fns))
	for i, fn := range fns {
		batch[i] = &job{fn: fn, done: make(chan error, 1)}
	}
	db.commitBatch(batch)
	out := make([]error, len(fns))
	for i, j := range batch {
		out[i] = <-j.done
	}
	return out
}

// StoredPlacement and PlacementDocID are storedPlacement and
// placementDocID (placementdocs.go).
var StoredPlacement, PlacementDocID = storedPlacement, placementDocID

// ClaimAtVersion is the claim of a free process from memory (freeprocs.go).
const ClaimAtVersion = claimAtVersion

// ErrPlacementMoved is errPlacementMoved (placed.go).
var ErrPlacementMoved = errPlacementMoved

// ExecInTx runs q in tx's transaction, now, as another writer's statement
// would have run before it.
func ExecInTx(tx store.Tx, q string, args ...any) error {
	_, err := tx.(*Tx).exec(q, args...)
	return err
}

// CountStatements counts, from now on, the statements of db's pipelines
// whose text is q.
func (db *DB) CountStatements(q string) *atomic.Int64 {
	var n atomic.Int64
	d := *db.dialect
	pipeline := d.Pipeline
	d.Pipeline = func(ctx context.Context, driverConn any, stmts []Statement) (int, error) {
		for _, s := range stmts {
			if s.Query == q {
				n.Add(1)
			}
		}
		return pipeline(ctx, driverConn, stmts)
	}
	db.dialect = &d
	return &n
}
