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
