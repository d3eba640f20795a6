package store

import "fmt"

// NotOwner is the error of a write for a fleet that this node does not own
// on a store shared by several nodes: the fleet's lease is held by another
// node (NodeID, with its forwarding address Address; both empty when no live
// node holds it), or was taken over since this node last held it. Nothing
// was written; the call may be sent to the owner, or retried.
type NotOwner struct {
	FleetID string
	NodeID  string
	Address string
}

func (e *NotOwner) Error() string {
	if e.NodeID == "" {
		return fmt.Sprintf("fleet %s has no owner node at the moment", e.FleetID)
	}
	return fmt.Sprintf("fleet %s is owned by node %s", e.FleetID, e.NodeID)
}

// FleetOwner is a fleet's lease: the node that owns it and the lease's
// epoch, which grows by one each time the lease moves. A fleet that no
// node has owned yet has NodeID "" and Epoch 0.
type FleetOwner struct {
	FleetID string
	NodeID  string
	Epoch   int64
	// Gone reports a lease whose fleet no longer exists (FleetOwners).
	Gone bool
}

// FleetOwnerTx keeps the fleets' leases (several nodes on PostgreSQL).
type FleetOwnerTx interface {
	// FleetOwners returns every fleet with its lease, by fleet id, and
	// the leases of fleets that no longer exist.
	FleetOwners() ([]FleetOwner, error)
	// FleetLease returns fleetID's lease (NodeID "" when no node holds
	// it) and the forwarding address of its holder ("" when it has none).
	FleetLease(fleetID string) (FleetOwner, string, error)
	// MoveFleet gives fleet from.FleetID's lease to node to with the next
	// epoch, provided it is still held as from says (from.NodeID "": no
	// node holds it), and returns the new lease and whether it moved. It
	// waits for the fleet's writes in flight to end, and every write the
	// old holder makes after it is refused.
	MoveFleet(from FleetOwner, to string) (FleetOwner, bool, error)
	// DropFleetOwner removes the lease of a fleet that no longer exists.
	DropFleetOwner(fleetID string) error
	// FenceFleet checks, in a write transaction, that this node owns
	// fleetID, as the fleet's writes do (*NotOwner otherwise), and keeps
	// the lease from moving until the transaction ends: for a change that
	// writes nothing of the fleet but must be made by its owner alone (a
	// fault kept in the owner's memory). Without fleet ownership it
	// checks nothing.
	FenceFleet(fleetID string) error
}
