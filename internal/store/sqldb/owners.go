package sqldb

import (
	"fmt"
	"slices"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Fleet ownership (several nodes on PostgreSQL, docs/several-nodes.md).
// Each fleet's lease (fleet_owners) names the node that owns it and an
// epoch. With Owners set, every write of a fleet's live state (its game
// sessions and their seats, its server processes, its computes, the
// fleet itself) is fenced: before it, the transaction reads the fleet's
// lease row locked in share mode (one statement) and checks that it
// names this node; otherwise the write fails with *store.NotOwner and the
// transaction writes nothing. MoveFleet updates that row, which waits for
// the share locks, so a lease moves only between transactions: a write
// that passed the fence commits before the move, and any later one reads
// the moved lease (read committed reads a locked row's newest version). A
// node paused past its lease, and resumed, can therefore change nothing.
// In a grouped transaction the read goes in the pipeline, ahead of the
// writes it guards and in the same round trip as them (fence).

// Owners is this node's view of the fleets it owns.
type Owners interface {
	// Self is this node's id.
	Self() string
	// Fencing reports whether fleet writes are checked now.
	Fencing() bool
	// Held returns the epoch of fleetID's lease as this node holds it.
	Held(fleetID string) (int64, bool)
	// Adopt records that the store says this node holds fleetID's lease
	// at epoch (a lease another node handed to it).
	Adopt(fleetID string, epoch int64)
	// Owned lists the fleets this node holds.
	Owned() []string
}

// SetOwners makes every fleet write check o (see above); nil turns the
// checks off.
func (db *DB) SetOwners(o Owners) {
	if o == nil {
		db.owners.Store(nil)
		return
	}
	db.owners.Store(&o)
}

// fenceKey is the first half of the key of each fleet's advisory lock,
// which MoveFleet takes so that moves of one fleet wait for each other.
const fenceKey = `hashtext('anylift fleet owner')`

// fence checks, once per transaction and fleet, that this node owns
// fleetID (see above).
//
// In a grouped transaction on PostgreSQL (pipeline.go), the lease's read
// is queued rather than run at once, and checked when the answer comes:
// it goes to the database in the same round trip as the job's next
// statement that needs an answer (or at the job's end), ahead of it and
// of every statement the job queued after the fence. The pipeline runs
// them in order in the one transaction, so the lease row is share-locked
// before any of the job's writes of the fleet runs, as it was when the
// read ran at once, and stays locked until the batch commits. A lease
// that names another node (or another epoch, after a read from memory)
// fails the job: the statements that ran after the read in the same
// round trip are undone with it to its savepoint, and the failure is the
// job's whatever its code made of it (Tx.failed), so nothing the job
// wrote commits. A later job of the batch finds the fleet fenced only if
// an earlier one's read passed, under the lock it still holds.
func (t *Tx) fence(fleetID string) error {
	op := t.db.owners.Load()
	if op == nil || !t.writable || t.db.dialect.Name != "postgres" {
		return nil
	}
	o := *op
	if !o.Fencing() {
		return nil
	}
	for _, f := range t.fenced {
		if f == fleetID {
			return nil
		}
	}
	t.fenced = append(t.fenced, fleetID)
	l := store.FleetOwner{FleetID: fleetID}
	var addr string
	return t.laterRow(func(r Row) error {
		err := r.Scan(&l.NodeID, &l.Epoch, &addr)
		if errNoRows(err) {
			return nil // no lease: l.NodeID is ""
		}
		return err
	}, func(err error) error {
		if err == nil {
			err = t.leaseHeld(o, l, addr)
		}
		if err != nil {
			t.fenced = slices.DeleteFunc(t.fenced, func(f string) bool { return f == fleetID })
		}
		return err
	}, true, leaseQuery+` FOR SHARE OF o`, fleetID)
}

// leaseHeld checks lease l, read under the fence's lock, against o.
func (t *Tx) leaseHeld(o Owners, l store.FleetOwner, addr string) error {
	if l.NodeID == "" {
		return &store.NotOwner{FleetID: l.FleetID}
	}
	if l.NodeID != o.Self() {
		return &store.NotOwner{FleetID: l.FleetID, NodeID: l.NodeID, Address: addr}
	}
	if held, ok := o.Held(l.FleetID); !ok || held != l.Epoch {
		o.Adopt(l.FleetID, l.Epoch)
		if t.memFleets[l.FleetID] {
			// This node held the fleet at another epoch than the store's
			// when it read the fleet's state from memory: another node
			// may have written it in between, which that memory missed
			// (memsessions.go). Adopting the lease reloads the memory;
			// this transaction fails rather than write from what it read.
			return fmt.Errorf("fleet %s: this node's lease changed to epoch %d while its state was read from memory; try again", l.FleetID, l.Epoch)
		}
	}
	return nil
}

// ownedOnly narrows a timer's query to the fleets this node owns while
// writes are fenced (a timer acts only for its own fleets): it returns
// " AND <col> = ANY(?)" and its argument, or nothing. col is an
// expression giving a row's fleet id.
func (t *Tx) ownedOnly(col string) (string, []any) {
	op := t.db.owners.Load()
	if op == nil || t.db.dialect.Name != "postgres" || !(*op).Fencing() {
		return "", nil
	}
	owned := (*op).Owned()
	if owned == nil {
		owned = []string{}
	}
	return " AND " + col + " = ANY(?)", []any{owned}
}

// sessionFleet is the fleet id of a row's game session ARN (ownedOnly).
const sessionFleet = `split_part(game_session_id, '/', 2)`

// fenceSession fences the fleet of game session id (its ARN names it).
func (t *Tx) fenceSession(id string) error {
	fleetID, _, ok := game.ParseGameSessionARN(id)
	if !ok {
		return nil // not a session of any fleet: the write finds nothing
	}
	return t.fence(fleetID)
}

// FenceFleet is fence, its answer awaited: the caller acts on it.
func (t *Tx) FenceFleet(fleetID string) error {
	if err := t.fence(fleetID); err != nil {
		return err
	}
	return t.sendQueued()
}

// ownNewFleet gives a fleet this transaction creates to this node.
func (t *Tx) ownNewFleet(fleetID string) error {
	op := t.db.owners.Load()
	if op == nil || t.db.dialect.Name != "postgres" || !(*op).Fencing() {
		return nil
	}
	if _, err := t.exec(`INSERT INTO fleet_owners (fleet_id, node_id, epoch) VALUES (?, ?, 1)
		ON CONFLICT (fleet_id) DO NOTHING`, fleetID, (*op).Self()); err != nil {
		return err
	}
	return t.fence(fleetID)
}

func (t *Tx) FleetOwners() ([]store.FleetOwner, error) {
	rows, err := t.query(`SELECT f.id, COALESCE(o.node_id, ''), COALESCE(o.epoch, 0) FROM fleets f
		LEFT JOIN fleet_owners o ON o.fleet_id = f.id
		UNION ALL SELECT o.fleet_id, o.node_id, -o.epoch FROM fleet_owners o
		WHERE NOT EXISTS (SELECT 1 FROM fleets f WHERE f.id = o.fleet_id)
		ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.FleetOwner
	for rows.Next() {
		var o store.FleetOwner
		if err := rows.Scan(&o.FleetID, &o.NodeID, &o.Epoch); err != nil {
			return nil, err
		}
		if o.Epoch < 0 {
			o.Epoch, o.Gone = -o.Epoch, true
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// leaseQuery reads a fleet's lease and its node's address.
const leaseQuery = `SELECT o.node_id, o.epoch, COALESCE(n.address, '') FROM fleet_owners o
	LEFT JOIN nodes n ON n.id = o.node_id WHERE o.fleet_id = ?`

func (t *Tx) FleetLease(fleetID string) (store.FleetOwner, string, error) {
	l := store.FleetOwner{FleetID: fleetID}
	var addr string
	err := t.queryRow(leaseQuery, fleetID).Scan(&l.NodeID, &l.Epoch, &addr)
	if errNoRows(err) {
		return l, "", nil
	}
	return l, addr, err
}

func (t *Tx) MoveFleet(from store.FleetOwner, to string) (store.FleetOwner, bool, error) {
	if t.db.dialect.Name == "postgres" {
		if _, err := t.exec(`SELECT pg_advisory_xact_lock(`+fenceKey+`, hashtext(?))`, from.FleetID); err != nil {
			return from, false, err
		}
	}
	if from.NodeID == "" {
		res, err := t.exec(`INSERT INTO fleet_owners (fleet_id, node_id, epoch) VALUES (?, ?, ?) ON CONFLICT (fleet_id) DO NOTHING`,
			from.FleetID, to, from.Epoch+1)
		ok, err := affected(res, err)
		return store.FleetOwner{FleetID: from.FleetID, NodeID: to, Epoch: from.Epoch + 1}, ok, err
	}
	res, err := t.exec(`UPDATE fleet_owners SET node_id = ?, epoch = epoch + 1 WHERE fleet_id = ? AND node_id = ? AND epoch = ?`,
		to, from.FleetID, from.NodeID, from.Epoch)
	ok, err := affected(res, err)
	return store.FleetOwner{FleetID: from.FleetID, NodeID: to, Epoch: from.Epoch + 1}, ok, err
}

func (t *Tx) DropFleetOwner(fleetID string) error {
	_, err := t.exec(`DELETE FROM fleet_owners WHERE fleet_id = ?`, fleetID)
	return err
}
